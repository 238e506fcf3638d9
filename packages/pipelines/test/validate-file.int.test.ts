import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readPipelineFile } from "../src/index";
import { baseDefinition, pretty, tempDir } from "./helpers";

describe("readPipelineFile: the resolve and read stages on a real file", () => {
  const dir = tempDir();
  const write = (name: string, content: string | Buffer): string => {
    writeFileSync(join(dir, name), content);
    return name;
  };

  it("validates a file given relative to cwd, with the path as given and the absolute entry", async () => {
    const name = write("good.json", pretty(baseDefinition()));
    const { report, definition, text } = await readPipelineFile(name, { cwd: dir });
    expect(report).toMatchObject({
      status: "pass",
      target: { path: "good.json", entry: join(dir, "good.json"), files: 1 },
    });
    expect(definition?.name).toBe("Base");
    expect(text).toBe(pretty(baseDefinition()));
  });

  it("drops a UTF-8 byte order mark and still counts columns from the first character", async () => {
    const d = baseDefinition();
    (d.nodes[0] as Record<string, unknown>)["runtime"] = "gpt";
    const name = write("bom.json", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pretty(d))]));
    const { report } = await readPipelineFile(name, { cwd: dir });
    expect(report.diagnostics[0]).toMatchObject({
      code: "pipeline_unknown_runtime",
      file: join(dir, "bom.json"),
    });
  });

  it.each([
    ["pipeline_file_not_found", "resolve", (): string => "missing.json"],
    [
      "pipeline_not_a_file",
      "resolve",
      (): string => {
        mkdirSync(join(dir, "folder.json"), { recursive: true });
        return "folder.json";
      },
    ],
    [
      "pipeline_not_utf8",
      "read",
      (): string => write("latin1.json", Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d])),
    ],
    [
      "pipeline_too_large",
      "read",
      (): string => write("large.json", Buffer.alloc(4 * 1024 * 1024 + 1, 0x20)),
    ],
  ] as const)("%s in the %s stage, every later stage skipped", async (code, stage, make) => {
    const { report, definition } = await readPipelineFile(make(), { cwd: dir });
    expect(definition).toBeNull();
    expect(report.diagnostics.map((d) => [d.code, d.stage, d.severity])).toEqual([[code, stage, "error"]]);
    expect(report.diagnostics[0]!.hint).not.toBeNull();
    const index = report.stages.findIndex((s) => s.name === stage);
    expect(report.stages[index]!.status).toBe("fail");
    expect(report.stages.slice(index + 1).every((s) => s.status === "skipped")).toBe(true);
  });

  it("reports a path through a file as not found", async () => {
    const name = write("plain.txt", "x");
    const { report } = await readPipelineFile(join(name, "child.json"), { cwd: dir });
    expect(report.diagnostics[0]!.code).toBe("pipeline_file_not_found");
  });

  it.runIf(process.platform === "linux")(
    "reports a file whose reading fails as pipeline_unreadable",
    async () => {
      // A regular file to stat whose read fails with EIO, even for root (permissions would not stop root).
      const { report } = await readPipelineFile("/proc/self/mem", { cwd: dir });
      expect(report.diagnostics.map((d) => [d.code, d.stage])).toEqual([["pipeline_unreadable", "read"]]);
      expect(report.diagnostics[0]!.message).toContain("EIO");
    },
  );
});
