import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Bundles a TypeScript entry of this package (with the package's sources and zod) into one ESM file that
 * a plain `node` child process can run: Node 20 cannot run TypeScript, and the tests must not depend on a
 * prior `pnpm build`. Uses tsup, the package's own build tool.
 */
export async function bundleForNode(entry: string, outDir: string): Promise<string> {
  const name = path.basename(entry, ".ts");
  await build({
    config: false,
    entry: { [name]: path.join(packageDir, entry) },
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    dts: false,
    sourcemap: false,
    splitting: false,
    clean: false,
    silent: true,
    noExternal: [/.*/],
    esbuildOptions(options) {
      options.conditions = ["source"];
    },
  });
  return path.join(outDir, `${name}.js`);
}
