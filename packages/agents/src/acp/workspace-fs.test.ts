import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { FileRequestError, MAX_READ_BYTES, WorkspaceFs } from "./workspace-fs";

function setup() {
  const dir = tmpDir("acp-fs-");
  const work = join(dir, "work");
  mkdirSync(work);
  return { dir, work, fs: new WorkspaceFs(work) };
}

async function reason(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (error instanceof FileRequestError) return error.reason;
    throw error;
  }
  throw new Error("expected the request to fail");
}

describe("WorkspaceFs", () => {
  it("reads and writes inside the workspace", async () => {
    const { work, fs } = setup();
    await fs.write({ path: join(work, "a", "b.txt"), content: "1\n2\n3" });
    expect(readFileSync(join(work, "a", "b.txt"), "utf8")).toBe("1\n2\n3");
    expect(await fs.read({ path: join(work, "a", "b.txt") })).toBe("1\n2\n3");
    expect(await fs.read({ path: join(work, "a", "b.txt"), line: 2 })).toBe("2\n3");
    expect(await fs.read({ path: join(work, "a", "b.txt"), limit: 1 })).toBe("1");
  });

  it("refuses paths outside it, relative paths, and links that lead out", async () => {
    const { dir, work, fs } = setup();
    writeFileSync(join(dir, "secret"), "s");
    symlinkSync(join(dir, "secret"), join(work, "link"));
    symlinkSync(dir, join(work, "up"));
    expect(await reason(() => fs.read({ path: join(dir, "secret") }))).toBe("outside_workspace");
    expect(await reason(() => fs.read({ path: join(work, "link") }))).toBe("outside_workspace");
    expect(await reason(() => fs.write({ path: join(work, "up", "new.txt"), content: "x" }))).toBe(
      "outside_workspace",
    );
    expect(await reason(() => fs.write({ path: join(work, "..", "x"), content: "x" }))).toBe(
      "outside_workspace",
    );
    expect(await reason(() => fs.read({ path: "a.txt" }))).toBe("invalid");
  });

  it("reports a missing file, a folder, and a file too large to send", async () => {
    const { work, fs } = setup();
    expect(await reason(() => fs.read({ path: join(work, "nope") }))).toBe("not_found");
    expect(await reason(() => fs.read({ path: work }))).toBe("invalid");
    writeFileSync(join(work, "big"), "");
    truncateSync(join(work, "big"), MAX_READ_BYTES + 1);
    expect(await reason(() => fs.read({ path: join(work, "big") }))).toBe("too_large");
  });
});
