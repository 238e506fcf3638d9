// Mastra workflows (and the zod its steps are declared with) for bench/children/peer-mastra.mjs, resolved from
// bench/peers/node_modules (this package is not part of the workspace; bench/run.mjs installs it on first use).
export { createStep, createWorkflow } from "@mastra/core/workflows";
export { z } from "zod";
