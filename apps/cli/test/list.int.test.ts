/**
 * `icode workflow list`: the text table and the `--json` shape, priority between locations and layouts,
 * warnings for skipped candidates, and that listing never runs workflow code.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { icode, type Project, project, SLOW } from "./run-helpers";

const ListJsonSchema = z.strictObject({
  workflows: z.array(
    z.strictObject({
      id: z.string(),
      source: z.enum(["project", "global", "builtin"]),
      layout: z.enum(["file", "package"]),
      title: z.string(),
      path: z.string(),
    }),
  ),
});
type Listed = z.infer<typeof ListJsonSchema>["workflows"][number];

function wf(title: string, topLevel = ""): string {
  return `from chrys.workflows import WorkflowBuilder
${topLevel}
wf = WorkflowBuilder(${JSON.stringify(title)})
node = wf.python("n", lambda value: value)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;
}

async function listJson(p: Project) {
  const r = await icode(p, ["workflow", "list", "--json"]);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.stdout.endsWith("\n")).toBe(true);
  return { ...r, workflows: ListJsonSchema.parse(JSON.parse(r.stdout)).workflows };
}

/** The text table as rows of cells (columns are separated by at least two spaces). */
async function listText(p: Project) {
  const r = await icode(p, ["workflow", "list"]);
  expect(r.exitCode, r.stderr).toBe(0);
  const [header, ...rows] = r.stdout.trimEnd().split("\n");
  return { ...r, header: header!.split(/ {2,}/), rows: rows.map((row) => row.split(/ {2,}/)) };
}

const BUILTINS = ["diff-summary", "echo", "json-format", "outline", "todo-scan", "word-stats"];

describe("icode workflow list", SLOW, () => {
  it("lists built-in workflows with their titles, in text and JSON", async () => {
    const p = project();
    const text = await listText(p);
    expect(text.header).toEqual(["ID", "Source", "Title", "Path"]);
    expect(text.stderr).toBe("");
    const echo = text.rows.find((r) => r[0] === "echo");
    expect(echo?.slice(0, 3)).toEqual(["echo", "builtin", "Echo"]);
    expect(echo?.[3]).toMatch(/[/\\]echo\.py$/);
    expect(text.rows.find((r) => r[0] === "word-stats")?.slice(0, 3)).toEqual([
      "word-stats",
      "builtin",
      "Word statistics",
    ]);

    const json = await listJson(p);
    expect(json.stderr).toBe("");
    expect(json.workflows.map((w) => w.id)).toEqual(expect.arrayContaining(BUILTINS));
    expect(json.workflows.find((w) => w.id === "echo")).toEqual({
      id: "echo",
      source: "builtin",
      layout: "file",
      title: "Echo",
      path: echo![3],
    });
    // Text and JSON list the same workflows in the same order.
    expect(text.rows.map((r) => r[0])).toEqual(json.workflows.map((w) => w.id));
  });

  it("shows project and global workflows; a project file shadows a built-in and a folder shadows a file", async () => {
    const p = project({
      ".chrys/workflows/echo.py": wf("My echo"),
      ".chrys/workflows/dup.py": wf("Dup file"),
      ".chrys/workflows/dup/dup.py": wf("Dup folder"),
      ".chrys/workflows/dup/helper.py": "X = 1\n",
      ".chrys/workflows/shared.py": wf("Project shared"),
      ".chrys/workflows/data/readme.txt": "not a workflow\n",
      ".chrys/workflows/_private.py": wf("Private"),
      ".chrys/workflows/.hidden.py": wf("Hidden"),
      ".home/workflows/global-one.py": wf("Global one"),
      ".home/workflows/shared.py": wf("Global shared"),
      ".home/workflows/sdk/sdk.py": wf("Reserved"),
    });
    const { workflows, stderr } = await listJson(p);
    expect(stderr).toBe("");
    const byId = new Map<string, Listed>(workflows.map((w) => [w.id, w]));
    expect(workflows.filter((w) => w.id === "echo")).toHaveLength(1);
    const wfDir = join(p.dir, ".chrys", "workflows");
    expect(byId.get("echo")).toEqual({
      id: "echo",
      source: "project",
      layout: "file",
      title: "",
      path: join(wfDir, "echo.py"),
    });
    expect(byId.get("dup")).toEqual({
      id: "dup",
      source: "project",
      layout: "package",
      title: "",
      path: join(wfDir, "dup", "dup.py"),
    });
    expect(byId.get("shared")).toMatchObject({ source: "project", path: join(wfDir, "shared.py") });
    expect(byId.get("global-one")).toEqual({
      id: "global-one",
      source: "global",
      layout: "file",
      title: "",
      path: join(p.home, "workflows", "global-one.py"),
    });
    for (const hidden of ["data", "_private", ".hidden", "sdk", "helper"])
      expect(byId.has(hidden)).toBe(false);
    const ids = workflows.map((w) => w.id);
    expect(ids).toEqual([...ids].sort());

    const text = await listText(p);
    expect(text.rows.find((r) => r[0] === "echo")).toEqual(["echo", "project", "-", join(wfDir, "echo.py")]);
    expect(text.rows.find((r) => r[0] === "dup")).toEqual([
      "dup",
      "project",
      "-",
      join(wfDir, "dup", "dup.py"),
    ]);
  });

  it("warns on stderr about skipped workflows, exits 0, and falls back to the next candidate", async () => {
    const p = project({
      "elsewhere.py": wf("Elsewhere"),
      ".chrys/workflows/writable.py": wf("Writable"),
      ".chrys/workflows/echo.py": wf("Bad echo"),
      ".chrys/workflows/ok.py": wf("Fine"),
    });
    const wfDir = join(p.dir, ".chrys", "workflows");
    symlinkSync(join(p.dir, "elsewhere.py"), join(wfDir, "linked.py"));
    chmodSync(join(wfDir, "writable.py"), 0o666); // others can write it: refused
    chmodSync(join(wfDir, "echo.py"), 0o666);
    for (const mode of ["text", "json"] as const) {
      const r = await icode(p, ["workflow", "list", ...(mode === "json" ? ["--json"] : [])]);
      expect(r.exitCode).toBe(0);
      const warnings = r.stderr.trimEnd().split("\n");
      expect(warnings).toHaveLength(3);
      expect(warnings.find((w) => w.includes(join(wfDir, "linked.py")))).toBeDefined();
      expect(warnings.find((w) => w.includes(join(wfDir, "writable.py")))).toBeDefined();
      expect(warnings.find((w) => w.includes(join(wfDir, "echo.py")))).toBeDefined();
      expect(r.stdout).not.toContain("linked");
      expect(r.stdout).not.toContain("writable");
      expect(r.stdout).toContain(join(wfDir, "ok.py"));
    }
    const { workflows } = await listJson(p);
    // The unreadable project echo.py shadows nothing: the built-in echo is listed.
    expect(workflows.find((w) => w.id === "echo")).toMatchObject({ source: "builtin", title: "Echo" });
  });

  it("does not run workflow code, trusted or not", async () => {
    const p = project({
      ".chrys/workflows/side.py": wf("Side", 'open("listed.marker", "a").close()'),
      ".chrys/workflows/pkg/pkg.py": wf("Pkg", 'open("pkg-listed.marker", "a").close()'),
    });
    const marker = join(p.dir, "listed.marker");
    await listText(p);
    await listJson(p);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(p.dir, "pkg-listed.marker"))).toBe(false);

    const run = await icode(p, ["workflow", "run", "side", "--trust", "-q"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true); // the run did run it
    rmSync(marker);
    const text = await listText(p);
    expect(text.rows.find((r) => r[0] === "side")?.[2]).toBe("Side");
    await listJson(p);
    expect(existsSync(marker)).toBe(false);
    // Nor does listing create sessions or compiled files next to the workflows.
    expect(readdirSync(join(p.home, "sessions"))).toHaveLength(1);
    expect(existsSync(join(p.dir, ".chrys", "workflows", "__pycache__"))).toBe(false);
  });

  it("stops quietly when its reader closes first (| head): exit 0, no EPIPE", async () => {
    // Over a pipe's 64 KiB, so that the reader is gone before the table is written.
    const tree: Record<string, string> = {};
    for (let i = 0; i < 800; i++) tree[`.chrys/workflows/wf-${i}.py`] = wf(`Workflow number ${i}`);
    const p = project(tree);
    for (const args of ["workflow list", "workflow list --json"]) {
      const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        const shell = spawn(
          "bash",
          ["-c", `"$NODE" "$BIN" ${args} | head -c 20; echo "icode exited $\{PIPESTATUS[0]}" >&2`],
          { cwd: p.dir, env: { ...process.env, NODE: process.execPath, BIN: CLI_BIN, CHRYS_HOME: p.home } },
        );
        let stdout = "";
        let stderr = "";
        shell.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
        shell.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
        shell.on("close", (code) => done({ code, stdout, stderr }));
      });
      expect(r.stdout.length, args).toBe(20);
      expect(r.stderr, args).toBe("icode exited 0\n");
    }
  });

  it("rejects arguments it does not know with exit 2", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "list", "--jsn"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--jsn");
  });
});
