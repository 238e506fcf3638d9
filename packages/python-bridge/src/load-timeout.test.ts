import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTimeoutDiagnostic } from "./load-timeout";

describe("loadTimeoutDiagnostic", () => {
  it("points at the innermost frame in the workflow's folder of the loading thread's stack", () => {
    const root = mkdtempSync(join(tmpdir(), "icode-load-"));
    const entry = join(root, "flow.py");
    const helper = join(root, "helper.py");
    writeFileSync(entry, "import helper\n");
    writeFileSync(helper, "import time\n\ndef wait():\n    time.sleep(100)\n\nwait()\n");
    const dump = [
      "Thread 0x00007f0000000001 (most recent call first):",
      '  File "/usr/lib/python3.11/threading.py", line 320 in wait',
      "",
      "Current thread 0x00007f0000000002 (most recent call first):",
      `  File "${helper}", line 4 in wait`,
      `  File "${helper}", line 6 in <module>`,
      '  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed',
      `  File "${entry}", line 1 in <module>`,
      '  File "/sdk/chrys/workflows/_loader.py", line 200 in load_workflow',
      "",
    ].join("\n");
    expect(loadTimeoutDiagnostic(dump, { entry, packageDir: null }, 60_000)).toMatchObject({
      code: "load_timeout",
      stage: "load",
      message: "loading the workflow did not finish within 60 seconds (stopped here)",
      file: helper,
      line: 4,
      source_line: "    time.sleep(100)",
      notes: [
        { message: "called from", file: helper, line: 6 },
        { message: "imported from", file: entry, line: 1 },
      ],
    });
  });

  it("names the entry file when the dump does not show where the load was", () => {
    const entry = join(tmpdir(), "flow.py");
    expect(loadTimeoutDiagnostic("", { entry, packageDir: null }, 1_500)).toMatchObject({
      code: "load_timeout",
      message: "loading the workflow did not finish within 1.5 seconds",
      file: entry,
      line: null,
      notes: [],
    });
  });
});
