/** The package's internals that its own integration tests drive directly (not its public API). */
export { canonicalJson } from "@icode/canonical-json";
export { writeFileAtomic, writeFileAtomicAsync } from "../src/atomic";
export { readEventLog } from "../src/event-log";
export { exportTrajectory } from "../src/export/index";
export { TrajectorySchema } from "../src/export/trajectory";
export { runHooks } from "../src/hooks/run";
export { type HookInput, HookPayloadSchema, HookSchema } from "../src/hooks/schema";
export { FILES, hooksFile, runDir, sessionDir } from "../src/layout";
export { isProcessAlive, processStartMarker } from "../src/process-marker";
export { recoverOrphans } from "../src/recovery";
export { createRun, listRuns, readRunDir } from "../src/run";
export { createSession, loadSession, saveSession } from "../src/session";
