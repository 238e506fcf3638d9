/**
 * @module @icode/script-metadata
 * A workflow's `# /// script` block (PEP 723): framing, TOML, `requires-python` and `[tool.chrys] python`,
 * and the interpreter it selects. Problems are `metadata_invalid` / `environment_invalid` diagnostics.
 *
 * @example
 * import { checkEnvironment, parseScriptMetadata, probeInterpreter, resolvePythonSetting } from "@icode/script-metadata";
 *
 * const source = '# /// script\n# requires-python = ">=3.10"\n# [tool.chrys]\n# python = ".venv"\n# ///\n';
 * const { metadata, sites } = parseScriptMetadata(source, "/work/flows/review/review.py");
 * // metadata → { requires_python: { specifier: ">=3.10", clauses: [...] }, dependencies: [], python: ".venv" }
 * const chosen = resolvePythonSetting({ python: metadata!.python, baseDir: "/work/flows/review", env: process.env, sites });
 * // chosen.interpreter → { kind: "user", command: "/work/flows/review/.venv/bin/python", declared: ".venv", origin: "tool.chrys.python" }
 * if (chosen.ok) {
 *   const probe = await probeInterpreter(chosen.interpreter.command, { env: process.env });
 *   if (probe.ok) checkEnvironment(metadata, probe.info, { sites, origin: chosen.interpreter.origin }); // → [] on 3.10+
 * }
 */
export { type ExtractedBlock, extractScriptBlock } from "./block";
export { SCRIPT_METADATA_CODES, type ScriptMetadataCode, ScriptMetadataCodeSchema } from "./codes";
export { checkEnvironment, type EnvironmentCheckContext, MIN_PYTHON_VERSION } from "./environment";
export {
  type DefaultInterpreterOptions,
  defaultInterpreter,
  type Env,
  findExecutableOnPath,
  type InterpreterResolution,
  type PathLookup,
  type ResolvePythonOptions,
  resolvePythonSetting,
} from "./interpreter";
export { knownLaunch, type Launch, type LaunchOptions, launchFor } from "./launch";
export {
  CHRYS_KEYS,
  emptyScriptMetadata,
  type ParsedScriptMetadata,
  parseScriptMetadata,
  SCRIPT_KEYS,
} from "./metadata";
export { type ProbeOptions, type ProbeResult, probeInterpreter } from "./probe";
export {
  failingClauses,
  formatClause,
  matchesRequiresPython,
  parseRequiresPython,
  type RequiresPythonIssue,
  type RequiresPythonParse,
} from "./requires-python";
export {
  INTERPRETER_ORIGINS,
  type InterpreterInfo,
  InterpreterInfoSchema,
  type InterpreterOrigin,
  InterpreterOriginSchema,
  type MetadataSites,
  MetadataSitesSchema,
  type PythonVersion,
  PythonVersionSchema,
  type RequiresPython,
  type RequiresPythonClause,
  RequiresPythonClauseSchema,
  RequiresPythonSchema,
  type ResolvedInterpreter,
  ResolvedInterpreterSchema,
  type ScriptBlock,
  ScriptBlockSchema,
  type ScriptMetadata,
  ScriptMetadataSchema,
  type SourcePosition,
  SourcePositionSchema,
  VERSION_OPERATORS,
  type VersionOperator,
  VersionOperatorSchema,
} from "./schema";
