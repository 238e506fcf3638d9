import { z } from "zod";

/** Why a helper of the ACP agent double failed: a script that is not one, or a log line that is not ours. */
export const ACP_DOUBLE_CODES = ["script_invalid", "log_invalid"] as const;
export const AcpDoubleCodeSchema = z.enum(ACP_DOUBLE_CODES);
export type AcpDoubleCode = z.infer<typeof AcpDoubleCodeSchema>;
