/** The `icode workflow validate` stages, in the order they run. No zod here: code that only builds
 * diagnostics (discovery for `icode workflow list`) never loads or builds the schemas. */
export const STAGES = ["resolve", "read", "metadata", "environment", "load", "graph", "bindings"] as const;
