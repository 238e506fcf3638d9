import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadHooksConfig } from "./config";
import { HookSchema, HooksConfigSchema } from "./schema";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("hooks configuration", () => {
  it("fills defaults: 30 s timeout, not blocking, on_error warn", () => {
    expect(HookSchema.parse({ event: "session_end", command: "echo done" })).toEqual({
      event: "session_end",
      command: "echo done",
      timeout_seconds: 30,
      blocking: false,
      on_error: "warn",
    });
  });

  it.each([
    [{ event: "node_started", command: "x" }, "event"],
    [{ event: "session_end", command: [] }, "command"],
    [{ event: "session_end", command: "  " }, "command"],
    [{ event: "session_end", command: "x", timeout_seconds: 0 }, "timeout_seconds"],
    [{ event: "session_end", command: "x", on_error: "explode" }, "on_error"],
    [{ event: "session_end", command: "x", blockng: true }, ""],
  ])("rejects %j", (hook, path) => {
    const result = HooksConfigSchema.safeParse({ hooks: [hook] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path.slice(2).join(".") ?? "").toBe(path);
  });

  it("reads no hooks from a missing file and names the file and path of a wrong one", () => {
    const home = mkdtempSync(join(tmpdir(), "hooks-"));
    dirs.push(home);
    expect(loadHooksConfig(home)).toEqual({ hooks: [] });
    writeFileSync(join(home, "hooks.json"), "{ not json");
    expect(() => loadHooksConfig(home)).toThrow(expect.objectContaining({ code: "hooks_config_invalid" }));
    writeFileSync(
      join(home, "hooks.json"),
      JSON.stringify({ hooks: [{ event: "session_end", command: "x", timeout_seconds: -1 }] }),
    );
    expect(() => loadHooksConfig(home)).toThrow(`${join(home, "hooks.json")}: hooks.0.timeout_seconds:`);
  });
});
