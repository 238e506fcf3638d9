import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DiscoveryOptions, DiscoveryResultSchema, discoverWorkflows, LIMITS } from "../src/index";
import {
  fifo,
  link,
  ownedBySomeoneElse,
  setupLocations,
  sparse,
  tempDir,
  withoutRoot,
  writeTree,
} from "./support/fs";

const WF = "print('workflow')\n";

const setup = setupLocations;

async function discover(options: DiscoveryOptions) {
  return DiscoveryResultSchema.parse(await discoverWorkflows(options));
}

const ids = (result: { workflows: Array<{ id: string }> }) => result.workflows.map((w) => w.id);

describe("discoverWorkflows: locations and IDs", () => {
  it("finds nothing when no location exists", async () => {
    const o = setup();
    expect(await discover(o)).toEqual({ workflows: [], skipped: [] });
  });

  it("finds files and folders in the project and global locations and files in the built-in one", async () => {
    const o = setup();
    writeTree(o.project, { "echo.py": WF, "review/review.py": WF, "review/steps.py": "X = 1\n" });
    writeTree(o.global, { "notes.py": WF, "triage/triage.py": WF });
    writeTree(o.builtin, { "hello.py": WF });
    const result = await discover(o);
    expect(result.skipped).toEqual([]);
    expect(result.workflows).toEqual([
      {
        id: "echo",
        source: "project",
        layout: "file",
        path: path.join(o.project, "echo.py"),
        packageDir: null,
        shadows: [],
      },
      {
        id: "hello",
        source: "builtin",
        layout: "file",
        path: path.join(o.builtin, "hello.py"),
        packageDir: null,
        shadows: [],
      },
      {
        id: "notes",
        source: "global",
        layout: "file",
        path: path.join(o.global, "notes.py"),
        packageDir: null,
        shadows: [],
      },
      {
        id: "review",
        source: "project",
        layout: "package",
        path: path.join(o.project, "review", "review.py"),
        packageDir: path.join(o.project, "review"),
        shadows: [],
      },
      {
        id: "triage",
        source: "global",
        layout: "package",
        path: path.join(o.global, "triage", "triage.py"),
        packageDir: path.join(o.global, "triage"),
        shadows: [],
      },
    ]);
  });

  it("ignores names starting with . or _, non-.py files and folders without an exact entry file", async () => {
    const o = setup();
    writeTree(o.project, {
      ".hidden.py": WF,
      "_draft.py": WF,
      "__init__.py": "",
      ".tool/.tool.py": WF,
      "_wip/_wip.py": WF,
      "notes.txt": "x",
      "upper.PY": WF,
      "data/rows.csv": "a,b\n",
      "venv/lib.py": WF,
      "lib/other.py": WF,
      empty: { dir: true },
      "ok.py": WF,
    });
    const result = await discover(o);
    expect(ids(result)).toEqual(["ok"]);
    expect(result.skipped).toEqual([]);
  });

  it("finds nothing inside a workflow folder, not even a nested folder with its own entry file", async () => {
    const o = setup();
    writeTree(o.project, {
      "review/review.py": WF,
      "review/other.py": WF,
      "review/helpers/helpers.py": WF,
    });
    expect(ids(await discover(o))).toEqual(["review"]);
  });

  it("looks for project workflows only in the working directory, not in its parents", async () => {
    const o = setup();
    writeTree(o.project, { "here.py": WF });
    writeTree(path.dirname(o.cwd), { ".chrys/workflows/parent.py": WF });
    expect(ids(await discover(o))).toEqual(["here"]);
    const sub = path.join(o.cwd, "sub");
    mkdirSync(sub);
    expect(ids(await discover({ ...o, cwd: sub }))).toEqual([]);
  });

  it("reserves the folder name sdk in the global location only", async () => {
    const o = setup();
    writeTree(o.global, { "sdk/sdk.py": WF, "sdk/chrys/workflows/__init__.py": "" });
    writeTree(o.project, { "sdk/sdk.py": WF });
    const result = await discover(o);
    expect(result.workflows).toMatchObject([{ id: "sdk", source: "project", shadows: [] }]);
  });

  it("finds built-in single files only", async () => {
    const o = setup();
    writeTree(o.builtin, { "hello.py": WF, "pkg/pkg.py": WF });
    expect(ids(await discover(o))).toEqual(["hello"]);
  });

  it("scans the folder once, as global, when the project location is the global one", async () => {
    const o = setup();
    const home = path.dirname(o.chrysHome);
    writeTree(o.global, { "echo.py": WF });
    const result = await discover({ ...o, cwd: home });
    expect(result.workflows).toMatchObject([{ id: "echo", source: "global", shadows: [] }]);
  });

  it("discovers 1000 workflows without reading them", async () => {
    const o = setup();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 900; i++) tree[`wf${String(i).padStart(4, "0")}.py`] = WF;
    for (let i = 0; i < 100; i++) {
      const name = `pkg${String(i).padStart(3, "0")}`;
      tree[`${name}/${name}.py`] = WF;
      tree[`${name}/steps.py`] = WF;
      tree[`${name}/prompts/summary.md`] = "x";
    }
    writeTree(o.project, tree);
    const started = performance.now();
    const result = await discover(o);
    const elapsed = performance.now() - started;
    expect(result.workflows).toHaveLength(1000);
    expect(result.skipped).toEqual([]);
    // Reported, not asserted: timing assertions make suites flaky. Expect a few tens of milliseconds.
    console.info(`discovered 1000 workflows in ${elapsed.toFixed(0)} ms`);
  });
});

describe("discoverWorkflows: priority and fallback", () => {
  /** Writes a candidate of ID `same` at priority p (1 = project folder … 5 = built-in). */
  function candidate(o: ReturnType<typeof setup>, priority: number): string {
    const at = [
      path.join(o.project, "same", "same.py"),
      path.join(o.project, "same.py"),
      path.join(o.global, "same", "same.py"),
      path.join(o.global, "same.py"),
      path.join(o.builtin, "same.py"),
    ][priority - 1]!;
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, WF);
    return at;
  }

  it.each([1, 2, 3, 4, 5])(
    "the first of priorities %i..5 wins and shadows the rest in order",
    async (first) => {
      const o = setup();
      const paths: string[] = [];
      for (let p = first; p <= 5; p++) paths.push(candidate(o, p));
      const result = await discover(o);
      expect(result.workflows).toHaveLength(1);
      const [winner] = result.workflows;
      expect(winner!.path).toBe(paths[0]);
      expect(winner!.shadows.map((s) => s.path)).toEqual(paths.slice(1));
      expect(result.skipped).toEqual([]);
    },
  );

  it("reports the source and layout of each priority", async () => {
    const o = setup();
    for (let p = 1; p <= 5; p++) candidate(o, p);
    const [winner] = (await discover(o)).workflows;
    expect([winner, ...winner!.shadows].map((c) => `${c!.source}/${c!.layout}`)).toEqual([
      "project/package",
      "project/file",
      "global/package",
      "global/file",
      "builtin/file",
    ]);
  });

  it("skips an unreadable candidate with its reason; it shadows nothing and the next one wins", async () => {
    const o = setup();
    const folderEntry = candidate(o, 1);
    link("/etc/hostname", path.join(path.dirname(folderEntry), "linked.txt"));
    const projectFile = candidate(o, 2);
    candidate(o, 4);
    const result = await discover(o);
    expect(result.workflows).toHaveLength(1);
    expect(result.workflows[0]).toMatchObject({ path: projectFile, source: "project", layout: "file" });
    expect(result.workflows[0]!.shadows.map((s) => s.path)).toEqual([path.join(o.global, "same.py")]);
    expect(result.skipped).toEqual([
      {
        id: "same",
        source: "project",
        layout: "package",
        path: folderEntry,
        packageDir: path.dirname(folderEntry),
        reason: expect.objectContaining({
          code: "package_link",
          stage: "read",
          severity: "error",
          file: path.join(path.dirname(folderEntry), "linked.txt"),
        }),
      },
    ]);
  });

  it("lists an ID whose every candidate is unreadable in skipped only", async () => {
    const o = setup();
    writeTree(o.project, { "real.txt": "x" });
    link(path.join(o.project, "real.txt"), path.join(o.project, "bad.py"));
    const result = await discover(o);
    expect(result.workflows).toEqual([]);
    expect(result.skipped).toMatchObject([{ id: "bad", reason: { code: "path_is_link" } }]);
  });

  it("falls back when the winning file cannot be read (chmod 000)", async () => {
    const o = setup();
    const top = candidate(o, 2);
    const next = candidate(o, 4);
    chmodSync(top, 0o000);
    const result = await withoutRoot(() => discover(o));
    expect(result.workflows.map((w) => w.path)).toEqual([next]);
    expect(result.skipped).toMatchObject([{ path: top, reason: { code: "source_unreadable", file: top } }]);
  });
});

describe("discoverWorkflows: links and special files", () => {
  it("skips a linked file, a linked folder and a folder with a link inside", async () => {
    const o = setup();
    const elsewhere = tempDir();
    writeTree(elsewhere, { "real.py": WF, "real/real.py": WF, "linked/linked.py": WF });
    link(path.join(elsewhere, "real.py"), path.join(o.project, "file.py"));
    link(path.join(elsewhere, "linked"), path.join(o.project, "linked"));
    writeTree(o.project, { "inner/inner.py": WF });
    link(path.join(elsewhere, "real"), path.join(o.project, "inner", "helpers"));
    writeTree(o.project, { "entry/other.py": WF });
    link(path.join(o.project, "entry", "other.py"), path.join(o.project, "entry", "entry.py"));
    const result = await discover(o);
    expect(result.workflows).toEqual([]);
    expect(result.skipped.map((s) => [s.id, s.layout, s.reason.code, s.reason.file])).toEqual([
      ["entry", "package", "path_is_link", path.join(o.project, "entry", "entry.py")],
      ["file", "file", "path_is_link", path.join(o.project, "file.py")],
      ["inner", "package", "package_link", path.join(o.project, "inner", "helpers")],
      ["linked", "package", "path_is_link", path.join(o.project, "linked")],
    ]);
  });

  it("ignores a link to a folder that holds no entry file, and a link without .py", async () => {
    const o = setup();
    const elsewhere = tempDir();
    writeTree(elsewhere, { "data/rows.csv": "x", "notes.txt": "x" });
    link(path.join(elsewhere, "data"), path.join(o.project, "data"));
    link(path.join(elsewhere, "notes.txt"), path.join(o.project, "notes"));
    expect(await discover(o)).toEqual({ workflows: [], skipped: [] });
  });

  it("skips a named pipe called like a workflow, and a folder holding one", async () => {
    const o = setup();
    fifo(path.join(o.project, "pipe.py"));
    writeTree(o.project, { "review/review.py": WF });
    fifo(path.join(o.project, "review", "queue"));
    const result = await discover(o);
    expect(result.workflows).toEqual([]);
    expect(result.skipped.map((s) => [s.id, s.reason.code])).toEqual([
      ["pipe", "path_not_workflow"],
      ["review", "package_unsupported_file"],
    ]);
  });

  it("skips a folder whose entry is not a regular file", async () => {
    const o = setup();
    writeTree(o.project, { "odd/odd.py/inner.py": WF });
    const result = await discover(o);
    expect(result.skipped).toMatchObject([{ id: "odd", reason: { code: "path_not_workflow" } }]);
  });

  it("does not check names starting with . or __pycache__ bytecode inside a folder", async () => {
    const o = setup();
    const dir = path.join(o.project, "review");
    writeTree(dir, { "review.py": WF, ".venv/lib/site.py": WF, "__pycache__/review.cpython-312.pyc": "x" });
    link("/etc/hostname", path.join(dir, ".venv", "lib", "linked"));
    fifo(path.join(dir, ".git", "fifo"));
    link("/etc/hostname", path.join(dir, "__pycache__", "stale.cpython-311.pyc"));
    expect(ids(await discover(o))).toEqual(["review"]);
  });

  it("still checks what is not bytecode inside __pycache__", async () => {
    const o = setup();
    const dir = path.join(o.project, "review");
    writeTree(dir, { "review.py": WF });
    link("/etc/hostname", path.join(dir, "__pycache__", "evil.py"));
    expect((await discover(o)).skipped).toMatchObject([{ id: "review", reason: { code: "package_link" } }]);
  });
});

describe("discoverWorkflows: ownership", () => {
  it("skips a file that other users can write (chmod 666) and a folder (chmod 777)", async () => {
    const o = setup();
    writeTree(o.project, {
      "open.py": WF,
      "shared/shared.py": WF,
      "inner/inner.py": WF,
      "inner/steps.py": WF,
    });
    chmodSync(path.join(o.project, "open.py"), 0o666);
    chmodSync(path.join(o.project, "shared"), 0o777);
    chmodSync(path.join(o.project, "inner", "steps.py"), 0o666);
    const result = await discover(o);
    expect(result.workflows).toEqual([]);
    expect(result.skipped.map((s) => [s.id, s.reason.code, s.reason.file])).toEqual([
      ["inner", "package_unreadable", path.join(o.project, "inner", "steps.py")],
      ["open", "source_unreadable", path.join(o.project, "open.py")],
      ["shared", "package_unreadable", path.join(o.project, "shared")],
    ]);
    expect(result.skipped[1]!.reason.message).toContain("mode 0666");
    expect(result.skipped[1]!.reason.hint).toContain("chmod go-w");
  });

  it("accepts a group-writable file of your own primary group, refuses it for another group", async () => {
    const o = setup();
    writeTree(o.project, { "team.py": WF });
    chmodSync(path.join(o.project, "team.py"), 0o664);
    const gid = process.getgid!();
    expect(ids(await discover({ ...o, gid }))).toEqual(["team"]);
    const result = await discover({ ...o, gid: gid + 1 });
    expect(result.skipped).toMatchObject([{ id: "team", reason: { code: "source_unreadable" } }]);
  });

  it("skips a file that belongs to someone else", async () => {
    const o = setup();
    writeTree(o.project, { "theirs.py": WF });
    const as = ownedBySomeoneElse(path.join(o.project, "theirs.py"));
    const result = await discover({ ...o, ...as });
    expect(result.skipped).toMatchObject([{ id: "theirs", reason: { code: "source_unreadable" } }]);
    expect(result.skipped[0]!.reason.message).toContain("belongs to user");
  });

  it("does not check the ownership of built-in workflows, nor anything with uid null", async () => {
    const o = setup();
    writeTree(o.builtin, { "hello.py": WF });
    writeTree(o.project, { "open.py": WF });
    chmodSync(path.join(o.builtin, "hello.py"), 0o666);
    chmodSync(path.join(o.project, "open.py"), 0o666);
    expect(ids(await discover(o))).toEqual(["hello"]);
    expect(ids(await discover({ ...o, uid: null }))).toEqual(["hello", "open"]);
  });

  it("reports a location it cannot list", async () => {
    const o = setup();
    writeTree(o.project, { "echo.py": WF });
    writeTree(o.global, { "notes.py": WF });
    chmodSync(o.project, 0o000);
    const result = await withoutRoot(() => discover(o));
    expect(ids(result)).toEqual(["notes"]);
    expect(result.skipped).toMatchObject([
      { id: null, source: "project", layout: null, path: o.project, reason: { code: "location_unreadable" } },
    ]);
  });
});

describe("discoverWorkflows: limits", () => {
  it("skips an entry file over 4 MiB and accepts one of exactly 4 MiB", async () => {
    const o = setup();
    writeTree(o.project, {
      "big.py": "#".repeat(LIMITS.sourceBytes + 1),
      "edge.py": "#".repeat(LIMITS.sourceBytes),
    });
    writeTree(o.project, { "pkg/pkg.py": "#".repeat(LIMITS.sourceBytes + 1) });
    const result = await discover(o);
    expect(ids(result)).toEqual(["edge"]);
    expect(result.skipped.map((s) => [s.id, s.reason.code])).toEqual([
      ["big", "source_too_large"],
      ["pkg", "source_too_large"],
    ]);
  });

  function folderWith(o: ReturnType<typeof setup>, name: string, files: number): string {
    const dir = path.join(o.project, name);
    const tree: Record<string, string> = { [`${name}.py`]: WF };
    for (let i = 1; i < files; i++) tree[`data/${i}.txt`] = "";
    writeTree(dir, tree);
    return dir;
  }

  it("skips a folder holding 1001 files and folders, accepts 1000", async () => {
    const o = setup();
    folderWith(o, "full", 999); // 999 files + the data folder = 1000
    folderWith(o, "over", 1000); // 1000 files + the data folder = 1001
    const result = await discover(o);
    expect(ids(result)).toEqual(["full"]);
    expect(result.skipped).toMatchObject([{ id: "over", reason: { code: "package_too_large" } }]);
    expect(result.skipped[0]!.reason.message).toContain("more than 1000 files and folders");
  });

  it("does not count names starting with . nor __pycache__ bytecode", async () => {
    const o = setup();
    const dir = folderWith(o, "full", 999);
    const extra: Record<string, string> = {};
    for (let i = 0; i < 300; i++) {
      extra[`.venv/lib/${i}.py`] = "";
      extra[`__pycache__/m${i}.cpython-312.pyc`] = "";
      extra[`data/__pycache__/m${i}.cpython-312.pyc`] = "";
    }
    writeTree(dir, extra);
    expect(ids(await discover(o))).toEqual(["full"]);
    writeTree(dir, { "__pycache__/notes.txt": "counted" });
    expect((await discover(o)).skipped).toMatchObject([
      { id: "full", reason: { code: "package_too_large" } },
    ]);
  });

  it("skips a folder nested 17 levels deep, accepts 16", async () => {
    const o = setup();
    const deep = (n: number) => Array.from({ length: n }, (_, i) => `d${i + 1}`).join("/");
    writeTree(o.project, {
      "ok/ok.py": WF,
      [`ok/${deep(LIMITS.packageDepth)}/leaf.txt`]: "x",
      "deep/deep.py": WF,
      [`deep/${deep(LIMITS.packageDepth + 1)}`]: { dir: true },
    });
    const result = await discover(o);
    expect(ids(result)).toEqual(["ok"]);
    expect(result.skipped).toMatchObject([{ id: "deep", reason: { code: "package_too_large" } }]);
    expect(result.skipped[0]!.reason.message).toContain("more than 16 folder levels");
  });

  it("skips a folder over 512 MiB (sparse files), not counting a .data folder", async () => {
    const o = setup();
    writeTree(o.project, { "huge/huge.py": WF, "fine/fine.py": WF });
    sparse(path.join(o.project, "huge", "a.bin"), 300 * 1024 * 1024);
    sparse(path.join(o.project, "huge", "b.bin"), 300 * 1024 * 1024);
    mkdirSync(path.join(o.project, "fine", ".data"));
    sparse(path.join(o.project, "fine", ".data", "a.bin"), 600 * 1024 * 1024);
    sparse(path.join(o.project, "fine", "b.bin"), 500 * 1024 * 1024);
    const result = await discover(o);
    expect(ids(result)).toEqual(["fine"]);
    expect(result.skipped).toMatchObject([{ id: "huge", reason: { code: "package_too_large" } }]);
    expect(result.skipped[0]!.reason.message).toContain("512 MiB");
  });
});
