import { defineConfig } from "tsup";

/** Each command, bundled on its own as `dist/<name>.js` and loaded by src/load-command.ts. */
const COMMANDS = [
  "workflow-list",
  "workflow-validate",
  "workflow-run",
  "trajectory-export",
  "history",
  "pipeline",
  "pipeline-run",
  "completion",
  // `icode agents` / `icode models`: the profile package only, never the agents package or its SDKs.
  "profiles",
];

// The published CLI is a few self-contained files: the workspace packages, zod and smol-toml are bundled in,
// from the packages' TypeScript sources (the `source` export condition). A cold `icode` then loads two
// files instead of ~140 modules: `dist/bin.js` (argument parsing) and the bundle of the one command that runs.
//
// - Commands are separate bundles rather than chunks of one build because a bundler shares code between
//   chunks by which files can reach it, not by what is used: `list` would then load zod and evaluate the
//   schemas that validate and run need (tens of milliseconds). Bundled alone, each command keeps only what it
//   uses (tree shaking honours `"sideEffects": false`).
// - Everything is CommonJS (scripts/copy-assets.mjs marks `dist/` so): the command bundles are compiled with
//   V8's code cache (see src/load-command.ts), and a CommonJS entry starts ~5 ms sooner than an ES module.
// - The bundles sit in `dist/` itself because the bundled code finds its files relative to its own folder;
//   scripts/copy-assets.mjs puts those files beside `dist/`.
export default defineConfig({
  entry: {
    bin: "src/bin.ts",
    // Loaded by `bin.js` for `workflow validate` only: bundled in, its ~20 KB would cost every command ~3 ms.
    prestart: "src/prestart.ts",
    // The handoff MCP server that ACP pipeline nodes start (found beside the bundle, see
    // packages/agents/src/pipeline/acp-session.ts); it uses Node's built-ins only.
    "handoff-server": "../../packages/agents/src/pipeline/handoff-server.ts",
    ...Object.fromEntries(COMMANDS.map((name) => [name, `src/commands/${name}.ts`])),
  },
  format: ["cjs"],
  outExtension: () => ({ js: ".js" }),
  target: "node20",
  clean: true,
  sourcemap: true,
  splitting: false,
  dts: false,
  shims: true, // import.meta.url, which the bundled packages use to find their files
  noExternal: [/^@icode\//, "zod", "smol-toml"],
  esbuildOptions(options) {
    options.conditions = ["source"];
    // `import()` of a bundle becomes `require`: an ES-module import of a CommonJS file would start Node's
    // ES-module loader (a few milliseconds) for nothing.
    options.supported = { ...options.supported, "dynamic-import": false };
  },
  esbuildPlugins: [
    {
      name: "commands-apart",
      setup(build) {
        // load-command.ts imports the command sources only where there are no bundles (tests, typecheck).
        build.onResolve({ filter: /^\.\/commands\// }, (args) =>
          args.importer.endsWith("load-command.ts") ? { path: args.path, external: true } : undefined,
        );
        // main.ts loads the prestart bundle (`dist/prestart.js`) rather than carrying it.
        build.onResolve({ filter: /^\.\/prestart$/ }, (args) =>
          args.importer.endsWith("main.ts") ? { path: "./prestart.js", external: true } : undefined,
        );
      },
    },
  ],
});
