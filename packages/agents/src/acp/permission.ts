import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type {
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from "@agentclientprotocol/sdk/unstable";
import type { Approval } from "@icode/agent-profiles";
import {
  type ApprovalMode,
  type ApprovalTarget,
  decideApproval,
  type ToolRef,
} from "@icode/agent-profiles/policy";
import { isInside } from "./paths";

/**
 * ACP tool kinds as the approval rules name tools: the kind a profile's `approval.overrides` would use
 * (agent-profiles.md §3) and, as the name, the ACP kind itself. Kinds with no counterpart keep their ACP
 * name as the kind, so only `approval.default` applies to them.
 */
const KIND_OF: Readonly<Record<string, string>> = {
  read: "filesystem.read",
  edit: "filesystem.write",
  delete: "filesystem.write",
  move: "filesystem.write",
  search: "search",
  execute: "shell",
  fetch: "web_fetch",
};

export function approvalTool(acpKind: string | null | undefined): ToolRef {
  const kind = acpKind ?? "other";
  return { kind: KIND_OF[kind] ?? kind, name: kind };
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

/** The Git repository root above `dir` (the folder holding `.git`), or null. */
export function gitRoot(dir: string): string | null {
  let current = resolve(dir);
  for (;;) {
    if (existsSync(join(current, ".git"))) return current;
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/**
 * What the safety rules look at in a permission request: the command of an `execute` call, the path of a
 * read or a write (from the call's `locations`, else `path`, `file_path` or `filePath` in `rawInput`).
 */
export function approvalTarget(
  toolCall: RequestPermissionRequest["toolCall"],
  workspace: string,
  repository: string | null,
): ApprovalTarget {
  const raw =
    typeof toolCall.rawInput === "object" && toolCall.rawInput !== null
      ? (toolCall.rawInput as Record<string, unknown>)
      : {};
  const tool = approvalTool(toolCall.kind);
  if (tool.kind === "shell") {
    const command = raw["command"];
    if (typeof command === "string") return { type: "shell", command };
    if (Array.isArray(command) && command.every((c) => typeof c === "string"))
      return { type: "shell", command: command.join(" ") };
    return { type: "other" };
  }
  const written = toolCall.locations?.[0]?.path ?? firstString(raw, ["path", "file_path", "filePath"]);
  if (written == null) return { type: "other" };
  const path = isAbsolute(written) ? written : resolve(workspace, written);
  if (tool.kind === "filesystem.read" || tool.kind === "search") return { type: "read", path };
  if (tool.kind === "filesystem.write") {
    const insideGitRepository =
      repository !== null && isInside(repository, path) && isInside(resolve(workspace), path);
    return { type: "write", path, insideGitRepository };
  }
  return { type: "other" };
}

/** How the engine answers one permission request, before asking anyone. */
export type PermissionPlan =
  | { action: "allow"; by: string }
  | { action: "ask"; by: string; tool: ToolRef; target: ApprovalTarget };

/**
 * Runs a permission request through the approval rules (`decideApproval`): a call the rules let run, or
 * any call under `bypass`, is allowed at once (`by` names the reason, or `bypass`); one that still needs
 * approval under `manual` (and `auto`: no approval judge model serves ACP agents, so a person decides) is
 * asked of the approval callback.
 */
export function planPermission(input: {
  request: RequestPermissionRequest;
  approval: Approval;
  mode: ApprovalMode;
  workspace: string;
  repository: string | null;
}): PermissionPlan {
  const tool = approvalTool(input.request.toolCall.kind);
  const target = approvalTarget(input.request.toolCall, input.workspace, input.repository);
  const decision = decideApproval({ approval: input.approval, tool, target, mode: input.mode });
  if (decision.action === "run")
    return { action: "allow", by: decision.required ? "bypass" : decision.reason };
  return { action: "ask", by: input.mode, tool, target };
}

function pick(options: readonly PermissionOption[], kinds: readonly string[]): PermissionOption | undefined {
  for (const kind of kinds) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return undefined;
}

/**
 * The answer to send: allowing picks `allow_once` (else `allow_always`), rejecting picks `reject_once`
 * (else `reject_always`); with no such option, or when the turn was cancelled, the outcome is `cancelled`.
 */
export function permissionResponse(
  options: readonly PermissionOption[],
  decision: "allowed" | "rejected" | "cancelled",
): RequestPermissionResponse {
  const option =
    decision === "allowed"
      ? pick(options, ["allow_once", "allow_always"])
      : decision === "rejected"
        ? pick(options, ["reject_once", "reject_always"])
        : undefined;
  return {
    outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" },
  };
}
