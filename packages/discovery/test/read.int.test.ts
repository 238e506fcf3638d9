import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LIMITS, ReadResultSchema, readTarget, type Target } from "../src/index";
import { fifo, link, ownedBySomeoneElse, sparse, tempDir, withoutRoot, writeTree } from "./support/fs";

const WF = "from chrys.workflows import WorkflowBuilder\n";
const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

function fileTarget(file: string, location: Target["location"] = null): Target {
  return {
    path: file,
    layout: "file",
    workflowId: path.basename(file, ".py"),
    entry: file,
    packageDir: null,
    location,
  };
}

function packageTarget(dir: string, location: Target["location"] = null): Target {
  const name = path.basename(dir);
  return {
    path: dir,
    layout: "package",
    workflowId: name,
    entry: path.join(dir, `${name}.py`),
    packageDir: dir,
    location,
  };
}

async function read(target: Target, options: { uid?: number | null; gid?: number | null } = {}) {
  return ReadResultSchema.parse(await readTarget(target, options));
}

/** The single error of a failed read, checked for its stage and an absolute file. */
async function failure(target: Target, options: { uid?: number | null; gid?: number | null } = {}) {
  const result = await read(target, options);
  expect(result.diagnostics.length).toBeGreaterThanOrEqual(1);
  const [d] = result.diagnostics;
  expect(d).toMatchObject({ stage: "read", severity: "error" });
  expect(path.isAbsolute(d!.file!)).toBe(true);
  return { d: d!, result };
}

describe("readTarget: what it reads", () => {
  it("reads a single file: its text, size and digest", async () => {
    const dir = tempDir();
    writeTree(dir, { "echo.py": WF });
    const file = path.join(dir, "echo.py");
    expect(await read(fileTarget(file))).toEqual({
      files: [{ relPath: "echo.py", absPath: file, size: Buffer.byteLength(WF), sha256: sha(WF) }],
      entrySource: WF,
      sourceDigest: sha(WF),
      diagnostics: [],
    });
  });

  it("reads a folder: every counted file, sorted, with the folder digest of clarification 23", async () => {
    const dir = path.join(tempDir(), "review");
    writeTree(dir, {
      "review.py": WF,
      "steps.py": "X = 1\n",
      "prompts/summary.md": "Summarise.\n",
      "data/rows.bin": Buffer.from([0, 255, 1]),
      ".git/HEAD": "ref\n",
      ".env": "SECRET=1\n",
      "__pycache__/steps.cpython-312.pyc": "bytecode",
      "helpers/__pycache__/git.cpython-312.pyc": "bytecode",
      "helpers/git.py": "def diff(): pass\n",
    });
    const result = await read(packageTarget(dir));
    expect(result.diagnostics).toEqual([]);
    expect(result.entrySource).toBe(WF);
    expect(result.files.map((f) => [f.relPath, f.size, f.sha256])).toEqual([
      ["data/rows.bin", 3, sha(Buffer.from([0, 255, 1]))],
      ["helpers/git.py", 17, sha("def diff(): pass\n")],
      ["prompts/summary.md", 11, sha("Summarise.\n")],
      ["review.py", Buffer.byteLength(WF), sha(WF)],
      ["steps.py", 6, sha("X = 1\n")],
    ]);
    expect(result.files[0]!.absPath).toBe(path.join(dir, "data", "rows.bin"));
    // Written out by hand: canonical JSON of the sorted [path, sha256] pairs.
    const pairs = result.files.map((f) => `["${f.relPath}","${f.sha256}"]`).join(",");
    expect(result.sourceDigest).toBe(sha(`[${pairs}]`));
  });

  it("changes the folder digest when a counted file is added, changed or removed, not otherwise", async () => {
    const dir = path.join(tempDir(), "review");
    writeTree(dir, { "review.py": WF, "steps.py": "X = 1\n" });
    const digest = async () => (await read(packageTarget(dir))).sourceDigest;
    const first = await digest();
    writeTree(dir, { ".notes": "ignored", "__pycache__/steps.cpython-312.pyc": "x", ".venv/lib/x.py": "" });
    expect(await digest()).toBe(first);
    writeTree(dir, { "steps.py": "X = 2\n" });
    const changed = await digest();
    expect(changed).not.toBe(first);
    writeTree(dir, { "new.txt": "" });
    const added = await digest();
    expect(added).not.toBe(changed);
    writeTree(dir, { "steps.py": "X = 1\n" });
    expect(await digest()).not.toBe(first);
  });

  it("removes a UTF-8 byte order mark from the entry text, not from the digest", async () => {
    const dir = tempDir();
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(WF)]);
    writeTree(dir, { "bom.py": bytes });
    const result = await read(fileTarget(path.join(dir, "bom.py")));
    expect(result.entrySource).toBe(WF);
    expect(result.sourceDigest).toBe(sha(bytes));
  });

  it("accepts an entry file of exactly 4 MiB", async () => {
    const dir = tempDir();
    writeTree(dir, { "edge.py": "#".repeat(LIMITS.sourceBytes) });
    const result = await read(fileTarget(path.join(dir, "edge.py")));
    expect(result.diagnostics).toEqual([]);
    expect(result.entrySource).toHaveLength(LIMITS.sourceBytes);
  });
});

describe("readTarget: the read codes", () => {
  it("source_not_utf8: names the line and column of the first bad byte", async () => {
    const dir = tempDir();
    const bytes = Buffer.concat([
      Buffer.from("x = 1\n# ok é\ns = '"),
      Buffer.from([0xe9]),
      Buffer.from("t'\n"),
    ]);
    writeTree(dir, { "latin1.py": bytes });
    const file = path.join(dir, "latin1.py");
    const { d, result } = await failure(fileTarget(file));
    expect(d).toMatchObject({
      code: "source_not_utf8",
      file,
      line: 3,
      column: 6,
      source_line: "s = '\ufffdt'",
    });
    expect(d.message).toContain("0xe9");
    expect(d.hint).toContain("UTF-8");
    expect(result.entrySource).toBeNull();
  });

  it("source_not_utf8: checks the entry file of a folder, not its other files", async () => {
    const dir = path.join(tempDir(), "review");
    writeTree(dir, { "review.py": WF, "data.bin": Buffer.from([0xff, 0xfe]) });
    expect((await read(packageTarget(dir))).diagnostics).toEqual([]);
    writeTree(dir, { "review.py": Buffer.from([0x23, 0xff]) });
    const { d } = await failure(packageTarget(dir));
    expect(d).toMatchObject({
      code: "source_not_utf8",
      file: path.join(dir, "review.py"),
      line: 1,
      column: 2,
    });
  });

  it("source_too_large: a file or a folder's entry of 4 MiB + 1", async () => {
    const dir = tempDir();
    writeTree(dir, {
      "big.py": "#".repeat(LIMITS.sourceBytes + 1),
      "pkg/pkg.py": "#".repeat(LIMITS.sourceBytes + 1),
    });
    const single = await failure(fileTarget(path.join(dir, "big.py")));
    expect(single.d).toMatchObject({ code: "source_too_large", file: path.join(dir, "big.py") });
    expect(single.result).toMatchObject({ files: [], entrySource: null, sourceDigest: null });
    const folder = await failure(packageTarget(path.join(dir, "pkg")));
    expect(folder.d).toMatchObject({ code: "source_too_large", file: path.join(dir, "pkg", "pkg.py") });
  });

  it("package_too_large: 1001 files and folders, 17 levels, over 512 MiB", async () => {
    const root = tempDir();
    const many: Record<string, string> = { "many.py": WF };
    for (let i = 0; i < 1000; i++) many[`f${i}.txt`] = "";
    writeTree(path.join(root, "many"), many);
    const levels = Array.from({ length: LIMITS.packageDepth + 1 }, (_, i) => `d${i}`).join("/");
    writeTree(path.join(root, "deep"), { "deep.py": WF, [levels]: { dir: true } });
    writeTree(path.join(root, "huge"), { "huge.py": WF });
    sparse(path.join(root, "huge", "a.bin"), LIMITS.packageBytes);
    sparse(path.join(root, "huge", "b.bin"), 1);
    for (const name of ["many", "deep", "huge"]) {
      const { d } = await failure(packageTarget(path.join(root, name)));
      expect([name, d.code]).toEqual([name, "package_too_large"]);
    }
  });

  it("package_link and package_unsupported_file: every problem in the folder is reported", async () => {
    const dir = path.join(tempDir(), "review");
    writeTree(dir, { "review.py": WF, "a/x.py": WF });
    link("/etc/hostname", path.join(dir, "a", "linked.txt"));
    link("/etc", path.join(dir, "etc"));
    fifo(path.join(dir, "queue"));
    const result = await read(packageTarget(dir));
    expect(result.diagnostics.map((d) => [d.code, d.stage, d.file])).toEqual([
      ["package_link", "read", path.join(dir, "etc")],
      ["package_unsupported_file", "read", path.join(dir, "queue")],
      ["package_link", "read", path.join(dir, "a", "linked.txt")],
    ]);
    expect(result).toMatchObject({ files: [], entrySource: null, sourceDigest: null });
  });

  it("source_unreadable and package_unreadable: files and folders that cannot be read (chmod 000)", async () => {
    const root = tempDir();
    writeTree(root, {
      "locked.py": WF,
      "review/review.py": WF,
      "review/steps.py": WF,
      "review/sub/a.md": "x",
    });
    const locked = path.join(root, "locked.py");
    chmodSync(locked, 0o000);
    chmodSync(path.join(root, "review", "steps.py"), 0o000);
    chmodSync(path.join(root, "review", "sub"), 0o000);
    await withoutRoot(async () => {
      const single = await failure(fileTarget(locked));
      expect(single.d).toMatchObject({ code: "source_unreadable", file: locked });
      expect(single.d.message).toContain("EACCES");
      const folder = await read(packageTarget(path.join(root, "review")));
      expect(folder.diagnostics.map((d) => [d.code, d.file])).toEqual([
        ["package_unreadable", path.join(root, "review", "steps.py")],
        ["package_unreadable", path.join(root, "review", "sub")],
      ]);
    });
    chmodSync(path.join(root, "review", "steps.py"), 0o644);
    chmodSync(path.join(root, "review", "sub"), 0o755);
    chmodSync(path.join(root, "review", "review.py"), 0o000);
    await withoutRoot(async () => {
      const entry = await failure(packageTarget(path.join(root, "review")));
      expect(entry.d).toMatchObject({
        code: "source_unreadable",
        file: path.join(root, "review", "review.py"),
      });
    });
  });

  it("source_unreadable and package_unreadable: files other users can change or that are not yours", async () => {
    const root = tempDir();
    writeTree(root, { "open.py": WF, "review/review.py": WF, "review/steps.py": WF, "theirs.py": WF });
    chmodSync(path.join(root, "open.py"), 0o666);
    chmodSync(path.join(root, "review", "steps.py"), 0o646);
    const open = await failure(fileTarget(path.join(root, "open.py")));
    expect(open.d).toMatchObject({ code: "source_unreadable", file: path.join(root, "open.py") });
    expect(open.d.hint).toContain("chmod go-w");
    const inner = await failure(packageTarget(path.join(root, "review")));
    expect(inner.d).toMatchObject({
      code: "package_unreadable",
      file: path.join(root, "review", "steps.py"),
    });
    const as = ownedBySomeoneElse(path.join(root, "theirs.py"));
    const theirs = await failure(fileTarget(path.join(root, "theirs.py")), as);
    expect(theirs.d.code).toBe("source_unreadable");
    expect(theirs.d.message).toContain("belongs to user");
  });

  it("does not check the ownership of a built-in target", async () => {
    const root = tempDir();
    writeTree(root, { "hello.py": WF });
    chmodSync(path.join(root, "hello.py"), 0o666);
    expect((await read(fileTarget(path.join(root, "hello.py"), "builtin"))).diagnostics).toEqual([]);
    expect((await read(fileTarget(path.join(root, "hello.py"), "global"))).diagnostics).toHaveLength(1);
  });

  it("reports a file that vanished since resolve", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "gone"));
    const { d } = await failure(fileTarget(path.join(root, "gone.py")));
    expect(d.code).toBe("source_unreadable");
    writeFileSync(path.join(root, "gone", "other.py"), WF);
    const folder = await read(packageTarget(path.join(root, "gone")));
    expect(folder.diagnostics.map((x) => x.code)).toEqual(["entry_missing"]);
  });
});
