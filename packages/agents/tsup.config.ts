import { defineConfig } from "tsup";
import { base } from "../../tsup.base.ts";

export default defineConfig(
  base({
    entry: ["src/index.ts", "src/codes.ts", "src/pipeline/index.ts", "src/pipeline/handoff-server.ts"],
  }),
);
