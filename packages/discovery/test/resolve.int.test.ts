import { chmodSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DiscoveryOptions, ResolveResultSchema, resolveTarget } from "../src/index";
import { fifo, link, setupLocations, tempDir, writeTree } from "./support/fs";

const WF = "print('workflow')\n";

const setup = setupLocations;

async function resolve(given: string, options: DiscoveryOptions) {
  return ResolveResultSchema.parse(await resolveTarget(given, options));
}

/** The one error of a failed resolve. */
async function failure(given: string, options: DiscoveryOptions) {
  const result = await resolve(given, options);
  expect(result.target).toBeNull();
  expect(result.diagnostics).toHaveLength(1);
  const [d] = result.diagnostics;
  expect(d).toMatchObject({ stage: "resolve", severity: "error" });
  expect(d!.message).not.toBe("");
  expect(d!.hint).not.toBeNull();
  return d!;
}

describe("resolveTarget: workflows it accepts", () => {
  it("accepts a single file anywhere, with no location", async () => {
    const o = setup();
    writeTree(o.cwd, { "scripts/echo.py": WF });
    expect(await resolve("scripts/echo.py", o)).toEqual({
      target: {
        path: "scripts/echo.py",
        layout: "file",
        workflowId: "echo",
        entry: path.join(o.cwd, "scripts", "echo.py"),
        packageDir: null,
        location: null,
      },
      diagnostics: [],
    });
  });

  it.each(["review", "review/", "review/review.py", "./review"])(
    "checks the folder when given %s",
    async (given) => {
      const o = setup();
      writeTree(o.cwd, { "review/review.py": WF, "review/steps.py": WF });
      const { target, diagnostics } = await resolve(given, o);
      expect(diagnostics).toEqual([]);
      expect(target).toEqual({
        path: given,
        layout: "package",
        workflowId: "review",
        entry: path.join(o.cwd, "review", "review.py"),
        packageDir: path.join(o.cwd, "review"),
        location: null,
      });
    },
  );

  it("accepts an absolute path", async () => {
    const o = setup();
    const elsewhere = tempDir();
    writeTree(elsewhere, { "echo.py": WF });
    const { target } = await resolve(path.join(elsewhere, "echo.py"), o);
    expect(target).toMatchObject({
      layout: "file",
      workflowId: "echo",
      entry: path.join(elsewhere, "echo.py"),
    });
  });

  it("names the location of a workflow that discovery would find", async () => {
    const o = setup();
    writeTree(o.project, { "echo.py": WF, "review/review.py": WF });
    writeTree(o.global, { "notes.py": WF, "triage/triage.py": WF });
    writeTree(o.builtin, { "hello.py": WF, "pkg/pkg.py": WF });
    const location = async (given: string) => (await resolve(given, o)).target?.location;
    expect(await location(".chrys/workflows/echo.py")).toBe("project");
    expect(await location(".chrys/workflows/review")).toBe("project");
    expect(await location(path.join(o.global, "notes.py"))).toBe("global");
    expect(await location(path.join(o.global, "triage", "triage.py"))).toBe("global");
    expect(await location(path.join(o.builtin, "hello.py"))).toBe("builtin");
    // Built-in workflows are single files only: a folder there is checked, but is in no location.
    expect(await location(path.join(o.builtin, "pkg"))).toBeNull();
  });

  it("treats workflows.py in a location as a single file, not the location as a folder", async () => {
    const o = setup();
    writeTree(o.project, { "workflows.py": WF });
    expect((await resolve(".chrys/workflows/workflows.py", o)).target).toMatchObject({
      layout: "file",
      workflowId: "workflows",
      location: "project",
    });
  });
});

describe("resolveTarget: path_not_found", () => {
  it("reports a missing path with a generic hint", async () => {
    const o = setup();
    const d = await failure("missing.py", o);
    expect(d).toMatchObject({ code: "path_not_found", file: path.join(o.cwd, "missing.py") });
    expect(d.hint).toBe("Check the path; the workflow list shows the workflows iCode finds.");
  });

  it.each(["echo", "echo.py", "elsewhere/echo.py"])(
    "points %s at the discovered workflow of that ID",
    async (given) => {
      const o = setup();
      writeTree(o.project, { "echo.py": WF });
      const d = await failure(given, o);
      expect(d.code).toBe("path_not_found");
      expect(d.hint).toContain(path.join(".chrys", "workflows", "echo.py"));
    },
  );

  it("points at a workflow folder, and at the first readable candidate", async () => {
    const o = setup();
    writeTree(o.project, { "review/review.py": WF });
    link("/etc/hostname", path.join(o.project, "review", "linked"));
    writeTree(o.global, { "review/review.py": WF });
    const d = await failure("review", o);
    expect(d.hint).toContain(path.join(o.global, "review"));
  });
});

describe("resolveTarget: path_is_link", () => {
  it("refuses a linked file, a linked folder, a folder reached through a link and a linked entry file", async () => {
    const o = setup();
    writeTree(o.cwd, { "real.py": WF, "realdir/realdir.py": WF, "review/other.py": WF });
    link(path.join(o.cwd, "real.py"), path.join(o.cwd, "echo.py"));
    link(path.join(o.cwd, "realdir"), path.join(o.cwd, "linked"));
    link(path.join(o.cwd, "realdir"), path.join(o.cwd, "alias"));
    link(path.join(o.cwd, "review", "other.py"), path.join(o.cwd, "review", "review.py"));
    const cases: Array<[string, string]> = [
      ["echo.py", path.join(o.cwd, "echo.py")],
      ["linked", path.join(o.cwd, "linked")],
      ["linked/", path.join(o.cwd, "linked")],
      ["review", path.join(o.cwd, "review", "review.py")],
      ["review/review.py", path.join(o.cwd, "review", "review.py")],
    ];
    for (const [given, file] of cases) {
      const d = await failure(given, o);
      expect([given, d.code, d.file]).toEqual([given, "path_is_link", file]);
    }
  });

  it("refuses the entry path of a folder that is a link", async () => {
    const o = setup();
    writeTree(o.cwd, { "real/alias.py": WF });
    link(path.join(o.cwd, "real"), path.join(o.cwd, "alias"));
    const d = await failure("alias/alias.py", o);
    expect(d).toMatchObject({ code: "path_is_link", file: path.join(o.cwd, "alias") });
  });
});

describe("resolveTarget: path_not_workflow", () => {
  it.each([
    ["a file that is not .py", { "notes.txt": "x" }, "notes.txt"],
    ["a file named as a folder", { "echo.py": WF }, "echo.py/"],
    ["the project location", { ".chrys/workflows/echo.py": WF }, ".chrys/workflows"],
    ["the .chrys folder around it", { ".chrys/workflows/echo.py": WF }, ".chrys"],
    ["the project folder around it", { ".chrys/workflows/echo.py": WF }, "."],
    [
      "a .chrys/workflows folder of another project",
      { "other/.chrys/workflows/echo.py": WF },
      "other/.chrys/workflows",
    ],
    [
      "a folder that holds workflow folders",
      { "all/review/review.py": WF, "all/triage/triage.py": WF },
      "all",
    ],
    ["a file inside a workflow folder", { "review/review.py": WF, "review/steps.py": WF }, "review/steps.py"],
    [
      "a folder inside a workflow folder",
      { "review/review.py": WF, "review/prompts/a.md": "x" },
      "review/prompts",
    ],
    [
      "a workflow folder inside a workflow folder",
      { "review/review.py": WF, "review/helpers/helpers.py": WF },
      "review/helpers",
    ],
    [
      "its entry path",
      { "review/review.py": WF, "review/helpers/helpers.py": WF },
      "review/helpers/helpers.py",
    ],
    [
      "a deep file inside a workflow folder",
      { "review/review.py": WF, "review/a/b/c.py": WF },
      "review/a/b/c.py",
    ],
    ["an entry that is a folder", { "odd/odd.py/inner.py": WF }, "odd"],
    ["a folder spelled in another case", { "Review/Review.py": WF }, "review"],
    ["an entry spelled in another case", { "review/review.py": WF }, "review/Review.py"],
    ["a file spelled in another case", { "Echo.py": WF }, "echo.py"],
    ["a parent folder spelled in another case", { "Scripts/echo.py": WF }, "scripts/echo.py"],
  ])("refuses %s", async (_name, tree, given) => {
    const o = setup();
    writeTree(o.cwd, tree);
    const d = await failure(given, o);
    expect(d.code).toBe("path_not_workflow");
    expect(path.isAbsolute(d.file!)).toBe(true);
  });

  it("names the real spelling in the hint", async () => {
    const o = setup();
    writeTree(o.cwd, { "Review/Review.py": WF });
    const d = await failure("review", o);
    expect(d.message).toContain('"Review"');
    expect(d.hint).toContain("Review");
  });

  it("points a file inside a workflow folder at the folder", async () => {
    const o = setup();
    writeTree(o.cwd, { "review/review.py": WF, "review/steps.py": WF });
    const d = await failure("review/steps.py", o);
    expect(d.hint).toBe("Check the whole folder: `review`.");
  });

  it("refuses a link inside a workflow folder as a path inside it", async () => {
    const o = setup();
    writeTree(o.cwd, { "review/review.py": WF, "real.py": WF });
    link(path.join(o.cwd, "real.py"), path.join(o.cwd, "review", "linked.py"));
    const d = await failure("review/linked.py", o);
    expect(d.code).toBe("path_not_workflow");
    expect(d.hint).toBe("Check the whole folder: `review`.");
  });

  it("refuses a named pipe", async () => {
    const o = setup();
    fifo(path.join(o.cwd, "pipe.py"));
    const d = await failure("pipe.py", o);
    expect(d.code).toBe("path_not_workflow");
    expect(d.message).toContain("named pipe");
  });
});

describe("resolveTarget: name_ignored, name_reserved, entry_missing", () => {
  it.each([
    ["_draft.py", { "_draft.py": WF }],
    [".hidden.py", { ".hidden.py": WF }],
    ["_wip", { "_wip/_wip.py": WF }],
    ["_wip/_wip.py", { "_wip/_wip.py": WF }],
    [".chrys/workflows/_draft.py", { ".chrys/workflows/_draft.py": WF }],
  ])("name_ignored: %s", async (given, tree) => {
    const o = setup();
    writeTree(o.cwd, tree);
    expect((await failure(given, o)).code).toBe("name_ignored");
  });

  it.each(["sdk", "sdk/", "sdk/sdk.py", "sdk/chrys/workflows/__init__.py"])(
    "name_reserved: %s in the global location",
    async (given) => {
      const o = setup();
      writeTree(o.global, { "sdk/sdk.py": WF, "sdk/chrys/workflows/__init__.py": "" });
      const d = await failure(path.join(o.global, given), o);
      expect(d.code).toBe("name_reserved");
    },
  );

  it("does not reserve sdk elsewhere", async () => {
    const o = setup();
    writeTree(o.project, { "sdk/sdk.py": WF });
    expect((await resolve(".chrys/workflows/sdk", o)).target).toMatchObject({
      workflowId: "sdk",
      location: "project",
    });
  });

  it("entry_missing: a folder without an entry file of its exact name", async () => {
    const o = setup();
    writeTree(o.cwd, { "review/steps.py": WF, empty: { dir: true }, "cased/Cased.py": WF });
    const d = await failure("review", o);
    expect(d).toMatchObject({ code: "entry_missing", file: path.join(o.cwd, "review") });
    expect(d.message).toContain("review.py");
    expect(d.hint).toContain("review/steps.py");
    expect((await failure("empty/", o)).code).toBe("entry_missing");
    const cased = await failure("cased", o);
    expect(cased.code).toBe("entry_missing");
    expect(cased.hint).toContain("Cased.py");
  });
});

describe("resolveTarget: shadowed", () => {
  it("warns when a higher-priority workflow with the same ID wins", async () => {
    const o = setup();
    writeTree(o.project, { "echo/echo.py": WF, "echo.py": WF });
    writeTree(o.global, { "echo.py": WF });
    writeTree(o.builtin, { "echo.py": WF });
    for (const given of [
      ".chrys/workflows/echo.py",
      path.join(o.global, "echo.py"),
      path.join(o.builtin, "echo.py"),
    ]) {
      const { target, diagnostics } = await resolve(given, o);
      expect(target).not.toBeNull();
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]).toMatchObject({
        code: "shadowed",
        severity: "warning",
        stage: "resolve",
        file: target!.entry,
      });
      expect(diagnostics[0]!.message).toContain(path.join(o.project, "echo"));
    }
    expect((await resolve(".chrys/workflows/echo", o)).diagnostics).toEqual([]);
  });

  it("does not warn when the higher-priority candidate cannot be read", async () => {
    const o = setup();
    writeTree(o.project, { "echo.py": WF });
    writeTree(o.global, { "echo.py": WF });
    chmodSync(path.join(o.project, "echo.py"), 0o666);
    const { target, diagnostics } = await resolve(path.join(o.global, "echo.py"), o);
    expect(target).toMatchObject({ location: "global" });
    expect(diagnostics).toEqual([]);
  });

  it("does not warn about a workflow outside the locations", async () => {
    const o = setup();
    writeTree(o.project, { "echo.py": WF });
    writeTree(o.cwd, { "echo.py": WF });
    expect(await resolve("echo.py", o)).toMatchObject({ target: { location: null }, diagnostics: [] });
  });
});
