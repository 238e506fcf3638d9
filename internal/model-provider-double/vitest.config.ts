import { defineConfig } from "vitest/config";
import shared from "../../vitest.shared.ts";

// Vitest hands the shared "source" condition to Node for externalized dependencies too, and
// `eventsource-parser` (under the AI SDK) exports "source" as raw .ts files that Node cannot load. Inlining
// the AI SDK lets Vite, which compiles TypeScript, load that chain instead.
export default defineConfig({
  ...shared,
  test: { ...shared.test, server: { deps: { inline: ["ai", /@ai-sdk\//, "eventsource-parser"] } } },
});
