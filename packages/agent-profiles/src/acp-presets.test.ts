import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { ACP_PRESETS, acpPresetProfile, findAcpPresets, findOnPath } from "./acp-presets";

function bin(dir: string, name: string, mode = 0o755): string {
  const file = join(dir, name);
  writeFileSync(file, "#!/bin/sh\n");
  chmodSync(file, mode);
  return file;
}

describe("ACP presets", () => {
  it("start the five runtimes as their documentation says", () => {
    expect(ACP_PRESETS.map((p) => [p.name, [p.command, ...p.args].join(" ")])).toEqual([
      ["Claude", "claude-agent-acp"],
      ["Codex", "codex-acp"],
      ["Gemini", "gemini --acp"],
      ["OpenCode", "opencode acp"],
      ["Kimi", "kimi acp"],
    ]);
    expect(new Set(ACP_PRESETS.map((p) => p.id)).size).toBe(ACP_PRESETS.length);
  });

  it("become sub-agent-only built-in ACP profiles with every other section at its default", () => {
    const profile = acpPresetProfile(ACP_PRESETS[2]!);
    expect(profile).toMatchObject({
      name: "Gemini",
      id: "b011ac900003",
      kind: "acp",
      source: "builtin",
      file: null,
      sub_agent_only: true,
      acp: { command: "gemini", args: ["--acp"], result_mode: "last_segment", handshake_timeout_seconds: 30 },
      approval: { default: "auto" },
    });
  });

  it("are found on PATH only when their command is an executable file there", async () => {
    const root = tmpDir("acp-path-");
    const a = join(root, "a");
    const b = join(root, "b");
    mkdirSync(a);
    mkdirSync(b);
    bin(a, "codex-acp", 0o644);
    const codex = bin(b, "codex-acp");
    mkdirSync(join(a, "gemini"));
    const found = await findAcpPresets({ PATH: [a, b].join(":") }, "linux");
    expect(found.map((f) => [f.preset.name, f.path])).toEqual([
      ["Claude", null],
      ["Codex", codex],
      ["Gemini", null],
      ["OpenCode", null],
      ["Kimi", null],
    ]);
  });

  it("look a command up with PATHEXT on Windows, and check a path as is", async () => {
    const root = tmpDir("acp-path-");
    const kimi = bin(root, "kimi.CMD");
    expect(await findOnPath("kimi", { Path: root, PATHEXT: ".EXE;.CMD" }, "win32")).toBe(kimi);
    expect(await findOnPath(join(root, "kimi.CMD"), {}, "linux")).toBe(kimi);
    expect(await findOnPath("kimi", {}, "linux")).toBeNull();
  });
});
