import { z } from "zod";

/**
 * The shapes this package hands to others. Each is one zod schema; every TypeScript type is inferred from it.
 * Field names are snake_case because the values are written into run records and JSON reports as they are.
 */

/** The `requires-python` operators iCode supports, longest first (the order the parser tries them in). */
export const VERSION_OPERATORS = ["~=", "==", "!=", "<=", ">=", "<", ">"] as const;
export const VersionOperatorSchema = z.enum(VERSION_OPERATORS);
export type VersionOperator = z.infer<typeof VersionOperatorSchema>;

/**
 * One `requires-python` clause, such as `>=3.10` or `==3.11.*`: an operator and a numeric release version.
 * `wildcard` is the trailing `.*`, allowed only with `==` and `!=`; `~=` needs at least two components.
 */
export const RequiresPythonClauseSchema = z
  .object({
    operator: VersionOperatorSchema,
    release: z.array(z.number().int().min(0)).min(1),
    wildcard: z.boolean(),
  })
  .refine((clause) => !clause.wildcard || clause.operator === "==" || clause.operator === "!=", {
    message: "`.*` works only with `==` and `!=`",
  })
  .refine((clause) => clause.operator !== "~=" || clause.release.length >= 2, {
    message: "`~=` needs at least two version components",
  });
export type RequiresPythonClause = z.infer<typeof RequiresPythonClauseSchema>;

/** A parsed `requires-python` value: the text as written and its clauses, all of which must match. */
export const RequiresPythonSchema = z.object({
  specifier: z.string(),
  clauses: z.array(RequiresPythonClauseSchema).min(1),
});
export type RequiresPython = z.infer<typeof RequiresPythonSchema>;

/** `[major, minor, micro]`, as `sys.version_info[:3]`. */
export const PythonVersionSchema = z.tuple([
  z.number().int().min(0),
  z.number().int().min(0),
  z.number().int().min(0),
]);
export type PythonVersion = z.infer<typeof PythonVersionSchema>;

/** What a workflow declares in its `# /// script` block; a file without a block declares nothing. */
export const ScriptMetadataSchema = z.object({
  requires_python: RequiresPythonSchema.nullable(),
  dependencies: z.array(z.string()),
  /** `[tool.chrys] python` exactly as written; resolve it with `resolvePythonSetting`. */
  python: z.string().min(1).nullable(),
});
export type ScriptMetadata = z.infer<typeof ScriptMetadataSchema>;

/** The `# /// script` block of a file: its TOML text and where it sits (1-based lines of the two markers). */
export const ScriptBlockSchema = z.object({
  /** The line of `# /// script`. */
  start_line: z.number().int().min(1),
  /** The line of the closing `# ///`. */
  end_line: z.number().int().min(1),
  /** The content lines without their `# ` (or `#`) prefix, joined with `\n`; TOML line k is file line start_line + k. */
  toml: z.string(),
});
export type ScriptBlock = z.infer<typeof ScriptBlockSchema>;

/** A place in the workflow file: 1-based line, 1-based column when known, and the text of that line. */
export const SourcePositionSchema = z.object({
  line: z.number().int().min(1),
  column: z.number().int().min(1).nullable(),
  source_line: z.string().nullable(),
});
export type SourcePosition = z.infer<typeof SourcePositionSchema>;

/**
 * Where the metadata was declared, so that the later `environment` stage can point its diagnostics at the
 * `python = …` or `requires-python = …` line. Positions are those of each value (or of its key when the value
 * cannot be found on its own, as inside an inline table).
 */
export const MetadataSitesSchema = z.object({
  file: z.string(),
  block: z.object({ start_line: z.number().int().min(1), end_line: z.number().int().min(1) }).nullable(),
  requires_python: SourcePositionSchema.nullable(),
  dependencies: SourcePositionSchema.nullable(),
  python: SourcePositionSchema.nullable(),
});
export type MetadataSites = z.infer<typeof MetadataSitesSchema>;

/**
 * Where the interpreter came from: the workflow's `[tool.chrys] python`, or, by default, the `ICODE_PYTHON`
 * environment variable or `python3` on `PATH`.
 */
export const INTERPRETER_ORIGINS = ["tool.chrys.python", "ICODE_PYTHON", "PATH"] as const;
export const InterpreterOriginSchema = z.enum(INTERPRETER_ORIGINS);
export type InterpreterOrigin = z.infer<typeof InterpreterOriginSchema>;

/** The interpreter to start for a workflow. */
export const ResolvedInterpreterSchema = z.object({
  /** `user` when the workflow sets `[tool.chrys] python`, else `default`. */
  kind: z.enum(["default", "user"]),
  /**
   * Absolute path of the executable to spawn. Symbolic links are kept, not resolved: a virtual environment's
   * `bin/python` is a link whose target knows nothing of the environment.
   */
  command: z.string().min(1),
  /** `[tool.chrys] python` as written, or `null` for the default interpreter. */
  declared: z.string().nullable(),
  origin: InterpreterOriginSchema,
});
export type ResolvedInterpreter = z.infer<typeof ResolvedInterpreterSchema>;

/**
 * What a started interpreter reports about itself (`probeInterpreter`): the facts the environment check and the
 * environment fingerprint (clarification 24) need.
 */
export const InterpreterInfoSchema = z.object({
  /** `sys.executable`: the binary to spawn from now on (a `python3` on `PATH` may be a slow shell shim). */
  executable: z.string().min(1),
  /** `os.path.realpath(sys.executable)`: the interpreter's resolved path. */
  resolved_path: z.string().min(1),
  /** `platform.python_implementation()`, such as `CPython` or `PyPy`. */
  implementation: z.string(),
  /** `platform.python_version()`, such as `3.12.4` or `3.13.0rc1`. */
  version: z.string(),
  version_info: PythonVersionSchema,
  /** `sys.platform`, such as `linux`, `darwin` or `win32`. */
  platform: z.string(),
  /** `platform.machine()`, such as `x86_64` or `arm64`. */
  machine: z.string(),
  /** `platform.libc_ver()` joined with a space, such as `glibc 2.36`; `null` when Python cannot tell. */
  libc: z.string().nullable(),
});
export type InterpreterInfo = z.infer<typeof InterpreterInfoSchema>;
