import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive, processStartMarker } from "./process-marker";

describe("process identity", () => {
  it("sees this process alive with a stable marker, and impossible pids dead", () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(processStartMarker(process.pid)).toBe(processStartMarker(process.pid));
    expect(isProcessAlive(0)).toBe(false);
    expect(isProcessAlive(-1)).toBe(false);
    expect(isProcessAlive(2 ** 22 + 1)).toBe(false);
    expect(processStartMarker(2 ** 22 + 1)).toBeNull();
  });

  it.skipIf(process.platform !== "linux")(
    "reads /proc/<pid>/stat field 22 even when the command name has spaces and parentheses",
    async () => {
      // A process whose name (comm) is "a) b (c" would break a naive split on spaces: run `sleep` through a
      // link of that name.
      const dir = mkdtempSync(join(tmpdir(), "comm-"));
      const link = join(dir, "a) b (c");
      symlinkSync(execFileSync("sh", ["-c", "command -v sleep"], { encoding: "utf8" }).trim(), link);
      const child = spawn(link, ["5"], { stdio: "ignore" });
      try {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(readFileSync(`/proc/${child.pid}/stat`, "utf8")).toContain("(a) b (c)");
        const marker = processStartMarker(child.pid!);
        expect(marker).toMatch(/^[0-9a-f-]+:\d+$/);
        expect(marker).not.toBe(processStartMarker(process.pid));
      } finally {
        child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
