import { defineConfig } from "vitest/config";
import shared from "../../vitest.shared.ts";

// Workers run with `--conditions source` (vitest.shared.ts), and eventsource, which the MCP client SDK
// imports, exports its TypeScript sources under "source": let vite load both, as it loads our sources.
export default defineConfig({
  ...shared,
  test: { ...shared.test, server: { deps: { inline: ["@modelcontextprotocol/client", "eventsource"] } } },
});
