/**
 * @module @icode/workflow-discovery
 * Where iCode finds workflows and whether it may read them: discovery locations, IDs, priority, skip
 * rules and limits, link and ownership checks, the `resolve` and `read` stages of validate, source
 * digests and the trust store. No workflow code is ever run here.
 *
 * @example
 * import os from "node:os";
 * import { configDir, discoverWorkflows, readTarget, resolveTarget } from "@icode/workflow-discovery";
 *
 * const chrysHome = configDir(process.env, os.homedir(), process.platform);
 * const { workflows, skipped } = await discoverWorkflows({ cwd: process.cwd(), chrysHome, builtinDir: null });
 * // workflows → [{ id: "echo", source: "project", layout: "file", path: "/repo/.chrys/workflows/echo.py", … }]
 *
 * const { target, diagnostics } = await resolveTarget("echo.py", { cwd: "/repo/.chrys/workflows", chrysHome, builtinDir: null });
 * if (target) {
 *   const read = await readTarget(target);
 *   // read.sourceDigest → "9f86d0…" (sha256 of echo.py); read.entrySource → "from chrys.workflows import …"
 * }
 */
export { DISCOVERY_CODE_STAGES, DISCOVERY_CODES, type DiscoveryCode } from "./codes";
export { configDir } from "./config-dir";
export { canonicalJson, folderDigest, jsonDigest, sha256Hex } from "./digest";
export { discoverWorkflows } from "./discover";
export { LIMITS } from "./limits";
export { type DiscoveryOptions, priorityOf } from "./options";
export { type ReadOptions, readTarget } from "./read";
export { resolveTarget } from "./resolve";
export {
  type CheckedFile,
  type CheckOptions,
  type CheckResult,
  type CheckSubject,
  checkWorkflow,
} from "./safety";
export {
  type Candidate,
  CandidateSchema,
  type DiscoveredWorkflow,
  DiscoveredWorkflowSchema,
  DiscoveryCodeSchema,
  type DiscoveryResult,
  DiscoveryResultSchema,
  type Layout,
  LayoutSchema,
  type ReadResult,
  ReadResultSchema,
  type ResolveResult,
  ResolveResultSchema,
  type Skipped,
  SkippedSchema,
  type Source,
  type SourceFile,
  SourceFileSchema,
  SourceSchema,
  type Target,
  TargetSchema,
} from "./schema";
export { targetOf } from "./target";
export {
  checkTrust,
  confirmTrust,
  encodedDefinition,
  type TrustCheck,
  type TrustSubject,
  untrustedMessage,
} from "./trust/check";
export { compareTrust, environmentFingerprint } from "./trust/compare";
export { trustDir, trustRecordPath } from "./trust/paths";
export {
  TRUST_RECORD_VERSION,
  type TrustRecord,
  type TrustRecordInput,
  TrustRecordSchema,
} from "./trust/record";
export {
  type EnvironmentInfo,
  EnvironmentInfoSchema,
  TRUST_PARTS,
  type TrustPart,
  TrustPartSchema,
  type TrustState,
  TrustStateSchema,
} from "./trust/schema";
export { readTrust, writeTrust } from "./trust/store";
export { readTrustTitles } from "./trust/titles";
export { findInvalidUtf8, type Utf8Error } from "./utf8";
