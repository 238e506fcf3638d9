import { describe, expect, it } from "vitest";
import { BUILTIN_TOOL_KINDS, TOOL_KINDS } from "./tool-kinds";

describe("tool kinds (section 3)", () => {
  it.each([
    ["shell", true, []],
    ["filesystem.read", true, ["read_file", "view_image"]],
    ["filesystem.write", true, ["write_file", "edit_file"]],
    ["search", true, ["grep", "glob"]],
    ["web_search", true, ["web_search"]],
    ["web_fetch", true, ["web_fetch"]],
    ["ask_user", true, ["ask_user"]],
    ["sleep", true, ["sleep"]],
    ["doc_converter", true, ["convert_document"]],
    ["todo", true, ["todo_write"]],
    ["sub_agent", false, []],
    ["mcp", false, []],
    ["skill", false, ["load_skill", "read_skill_resource", "run_skill_script"]],
    ["context", false, ["compress_context", "recall_context", "list_compressed_contexts"]],
  ] as const)("%s", (kind, builtin, tools) => {
    expect(TOOL_KINDS[kind]).toMatchObject({ builtin, tools });
  });

  it("lists exactly the built-in kinds for tools.builtins", () => {
    expect(BUILTIN_TOOL_KINDS).toEqual(
      Object.entries(TOOL_KINDS)
        .filter(([, k]) => k.builtin)
        .map(([name]) => name),
    );
    expect(Object.keys(TOOL_KINDS)).toHaveLength(14);
  });
});
