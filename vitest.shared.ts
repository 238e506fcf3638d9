import { defineConfig } from "vitest/config";

/**
 * Shared vitest settings. The "source" export condition makes workspace packages resolve to their
 * TypeScript sources, so unit tests need no build; `*.int.test.ts` files spawn the built CLI.
 */
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"], externalConditions: ["source"] } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Workers resolve externalized dependencies with the "source" condition too, and a few dependencies of the
    // AI and MCP SDKs (`eventsource-parser`, `eventsource`) export raw TypeScript under "source", which Node
    // cannot load: Vite loads that chain instead, as it loads our own sources.
    server: {
      deps: {
        inline: ["ai", /\/@ai-sdk\//, "eventsource-parser", /\/@modelcontextprotocol\//, "eventsource"],
      },
    },
  },
});
