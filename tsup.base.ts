import type { Options } from "tsup";

/** Shared tsup settings: ESM with declarations; every package's tsup.config.ts is one line. */
export function base(overrides: Options = {}): Options {
  return {
    format: ["esm"],
    target: "node20",
    dts: true,
    clean: true,
    sourcemap: true,
    splitting: false,
    ...overrides,
  };
}
