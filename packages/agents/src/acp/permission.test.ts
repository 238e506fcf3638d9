import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk/unstable";
import { AgentProfileFileSchema, type Approval } from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { approvalTarget, approvalTool, gitRoot, permissionResponse, planPermission } from "./permission";

/** The approval every ACP profile has: its own section is reset to the defaults. */
const DEFAULT_APPROVAL: Approval = AgentProfileFileSchema.parse({ name: "A", acp: {} }).approval;

function request(toolCall: Partial<RequestPermissionRequest["toolCall"]>): RequestPermissionRequest {
  return {
    sessionId: "s",
    toolCall: { toolCallId: "c1", ...toolCall },
    options: [
      { optionId: "always", name: "Always", kind: "allow_always" },
      { optionId: "once", name: "Once", kind: "allow_once" },
      { optionId: "no", name: "No", kind: "reject_once" },
    ],
  };
}

function plan(toolCall: Partial<RequestPermissionRequest["toolCall"]>, mode: ApprovalMode, workspace = "/w") {
  return planPermission({
    request: request(toolCall),
    approval: DEFAULT_APPROVAL,
    mode,
    workspace,
    repository: null,
  });
}

describe("the approval of ACP permission requests", () => {
  it("names ACP kinds as the approval rules' tool kinds", () => {
    expect(approvalTool("execute")).toEqual({ kind: "shell", name: "execute" });
    expect(approvalTool("edit")).toEqual({ kind: "filesystem.write", name: "edit" });
    expect(approvalTool("read")).toEqual({ kind: "filesystem.read", name: "read" });
    expect(approvalTool("fetch")).toEqual({ kind: "web_fetch", name: "fetch" });
    expect(approvalTool(undefined)).toEqual({ kind: "other", name: "other" });
  });

  it("reads the command or the path the request is about", () => {
    expect(
      approvalTarget(
        { toolCallId: "c", kind: "execute", rawInput: { command: ["git", "status"] } },
        "/w",
        null,
      ),
    ).toEqual({
      type: "shell",
      command: "git status",
    });
    expect(
      approvalTarget({ toolCallId: "c", kind: "read", rawInput: { file_path: "src/.env" } }, "/w", null),
    ).toEqual({
      type: "read",
      path: "/w/src/.env",
    });
    expect(
      approvalTarget({ toolCallId: "c", kind: "edit", locations: [{ path: "/w/a.ts" }] }, "/w", "/w"),
    ).toEqual({ type: "write", path: "/w/a.ts", insideGitRepository: true });
    expect(
      approvalTarget({ toolCallId: "c", kind: "edit", locations: [{ path: "/elsewhere/a.ts" }] }, "/w", "/"),
    ).toEqual({
      type: "write",
      path: "/elsewhere/a.ts",
      insideGitRepository: false,
    });
  });

  it("allows everything under bypass, saying so when approval was required", () => {
    expect(plan({ kind: "execute", rawInput: { command: "rm -rf /" } }, "bypass")).toEqual({
      action: "allow",
      by: "bypass",
    });
    expect(plan({ kind: "think" }, "bypass")).toEqual({ action: "allow", by: "level_allows" });
  });

  it("asks under manual for what the rules require, and allows the rest", () => {
    expect(plan({ kind: "execute", rawInput: { command: "rm -rf build" } }, "manual")).toMatchObject({
      action: "ask",
      by: "manual",
      tool: { kind: "shell" },
    });
    expect(plan({ kind: "execute", rawInput: { command: "git status" } }, "manual")).toEqual({
      action: "allow",
      by: "safe_read_only_command",
    });
    expect(plan({ kind: "edit", locations: [{ path: "/w/a.ts" }] }, "manual")).toMatchObject({
      action: "ask",
    });
    expect(plan({ kind: "read", locations: [{ path: "/w/a.ts" }] }, "manual")).toEqual({
      action: "allow",
      by: "level_allows",
    });
    expect(plan({ kind: "read", locations: [{ path: "/w/.env" }] }, "manual")).toMatchObject({
      action: "ask",
    });
    expect(plan({ kind: "fetch" }, "auto")).toMatchObject({ action: "ask", by: "auto" });
  });

  it("lets writes inside the workspace's Git repository run", () => {
    const root = tmpDir("acp-git-");
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, "pkg"));
    expect(gitRoot(join(root, "pkg"))).toBe(root);
    const decided = planPermission({
      request: request({ kind: "edit", locations: [{ path: join(root, "pkg", "a.ts") }] }),
      approval: DEFAULT_APPROVAL,
      mode: "manual",
      workspace: join(root, "pkg"),
      repository: gitRoot(join(root, "pkg")),
    });
    expect(decided).toEqual({ action: "allow", by: "safe_repository_write" });
  });

  it("answers with a once option first, and cancelled when nothing fits", () => {
    const { options } = request({});
    expect(permissionResponse(options, "allowed")).toEqual({
      outcome: { outcome: "selected", optionId: "once" },
    });
    expect(permissionResponse(options, "rejected")).toEqual({
      outcome: { outcome: "selected", optionId: "no" },
    });
    expect(permissionResponse(options, "cancelled")).toEqual({ outcome: { outcome: "cancelled" } });
    expect(permissionResponse([{ optionId: "y", name: "Y", kind: "allow_always" }], "rejected")).toEqual({
      outcome: { outcome: "cancelled" },
    });
  });
});
