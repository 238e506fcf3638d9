import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./usage";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `node:util` parseArgs with our usage errors: unknown options and missing values exit 2 with the usage. */
export function parse<O extends Options>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usage);
  }
}
