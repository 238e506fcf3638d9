import { z } from "zod";

/** Why a helper of the MCP double failed: bad server options, or a call log line that is not ours. */
export const MCP_DOUBLE_CODES = ["options_invalid", "log_invalid"] as const;
export const McpDoubleCodeSchema = z.enum(MCP_DOUBLE_CODES);
export type McpDoubleCode = z.infer<typeof McpDoubleCodeSchema>;
