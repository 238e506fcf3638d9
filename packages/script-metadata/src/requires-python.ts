import { WorkflowError } from "@icode/workflow-errors";
import type { PythonVersion, RequiresPython, RequiresPythonClause, VersionOperator } from "./schema";

/**
 * `requires-python` as the spec allows it: comma-separated clauses, each one of `~=`, `==`, `!=`, `<=`,
 * `>=`, `<`, `>` followed by a numeric release version (`3`, `3.10`, `3.10.2`). `.*` may end the version only
 * with `==` and `!=`; `~=` needs at least two components. Whitespace may surround operators, versions and
 * commas. Everything else PEP 440 has (`===`, epochs, pre-, post-, dev- and local versions, a `v` prefix) and
 * every empty clause is rejected. Matching follows PEP 440 for release versions.
 */

/** One problem in a `requires-python` value; `offset` and `length` are in UTF-16 units of the value. */
export interface RequiresPythonIssue {
  message: string;
  hint: string;
  offset: number;
  length: number;
}

export type RequiresPythonParse =
  | { ok: true; value: RequiresPython }
  | { ok: false; issues: RequiresPythonIssue[] };

const OPERATOR = /^(===|~=|==|!=|<=|>=|<|>)/;
const VERSION = /^([0-9]+(?:\.[0-9]+)*)(\.\*)?$/;
const EXAMPLE = 'such as ">=3.10" or ">=3.10,<3.13"';

/** Parses a `requires-python` value; every clause is checked and each bad one is reported. */
export function parseRequiresPython(specifier: string): RequiresPythonParse {
  if (specifier.trim() === "") {
    return {
      ok: false,
      issues: [
        {
          message: "requires-python is empty: expected one or more comma-separated version clauses",
          hint: `write a constraint ${EXAMPLE}, or remove requires-python`,
          offset: 0,
          length: specifier.length,
        },
      ],
    };
  }

  const clauses: RequiresPythonClause[] = [];
  const issues: RequiresPythonIssue[] = [];
  let offset = 0;
  const parts = specifier.split(",");
  parts.forEach((part, index) => {
    const leading = part.length - part.trimStart().length;
    const text = part.trim();
    const parsed = parseClause(text, offset + leading, index, parts.length, specifier);
    if ("issue" in parsed) issues.push(parsed.issue);
    else clauses.push(parsed.clause);
    offset += part.length + 1;
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: { specifier, clauses } };
}

function parseClause(
  text: string,
  offset: number,
  index: number,
  count: number,
  specifier: string,
): { clause: RequiresPythonClause } | { issue: RequiresPythonIssue } {
  const issue = (message: string, hint: string, length = text.length) => ({
    issue: { message, hint, offset, length: Math.max(length, 1) },
  });

  if (text === "") {
    const where =
      count === 1
        ? ""
        : index === 0
          ? " before the first comma"
          : index === count - 1
            ? " after the last comma"
            : ` between commas ${index} and ${index + 1}`;
    return issue(
      `requires-python ${JSON.stringify(specifier)} has an empty clause${where}`,
      `remove the extra comma; clauses are written ${EXAMPLE}`,
    );
  }

  const operatorMatch = OPERATOR.exec(text);
  if (operatorMatch === null) {
    if (/^[0-9]/.test(text)) {
      return issue(
        `requires-python clause ${JSON.stringify(text)} has no operator`,
        `start it with one of ~= == != <= >= < >, for example ">=${text}" or "==${text}.*"`,
      );
    }
    const written = /^[<>=!~^*]*/.exec(text)![0];
    if (written === "") {
      return issue(
        `requires-python clause ${JSON.stringify(text)} is not a version clause`,
        `write an operator (one of ~= == != <= >= < >) followed by digits separated by dots, ${EXAMPLE}`,
      );
    }
    const suggestion = written === "=>" ? ">=" : written === "=<" ? "<=" : written === "=" ? "==" : null;
    return issue(
      `requires-python clause ${JSON.stringify(text)} uses the unsupported operator ${JSON.stringify(written)}`,
      suggestion === null
        ? "use one of ~= == != <= >= < > followed by a version such as 3.10"
        : `write ${JSON.stringify(suggestion)} instead of ${JSON.stringify(written)}`,
      written.length,
    );
  }

  const written = operatorMatch[1]!;
  if (written === "===") {
    return issue(
      `requires-python clause ${JSON.stringify(text)} uses arbitrary equality "===", which iCode does not support`,
      'use "==" with a numeric version, such as "==3.12.4"',
      3,
    );
  }
  const operator = written as VersionOperator;
  const versionText = text.slice(written.length).trim();
  const versionOffset = text.length - text.slice(written.length).trimStart().length;
  const atVersion = (message: string, hint: string) => ({
    issue: { message, hint, offset: offset + versionOffset, length: Math.max(versionText.length, 1) },
  });

  if (versionText === "") {
    return issue(
      `requires-python clause ${JSON.stringify(text)} has no version after ${JSON.stringify(operator)}`,
      `write a numeric version after the operator, such as "${operator}3.10"`,
    );
  }
  const match = VERSION.exec(versionText);
  if (match === null) {
    return atVersion(
      `requires-python clause ${JSON.stringify(text)}: ${JSON.stringify(versionText)} is not a numeric release version`,
      "use digits separated by dots, such as 3, 3.10 or 3.10.2; pre-, post-, dev- and local versions, epochs and a leading v are not supported",
    );
  }
  const release = match[1]!.split(".").map(Number);
  if (release.some((component) => !Number.isSafeInteger(component))) {
    return atVersion(
      `requires-python clause ${JSON.stringify(text)}: a component of ${JSON.stringify(versionText)} is too large`,
      "use a real Python version, such as 3.10",
    );
  }
  const wildcard = match[2] !== undefined;
  if (wildcard && operator !== "==" && operator !== "!=") {
    return issue(
      `requires-python clause ${JSON.stringify(text)}: ".*" works only with "==" and "!="`,
      `write "==${match[1]}.*" to allow every ${match[1]} release, or drop ".*" (for example "${operator}${match[1]}")`,
    );
  }
  if (operator === "~=" && release.length < 2) {
    return issue(
      `requires-python clause ${JSON.stringify(text)}: "~=" needs at least two version components`,
      `write "~=${release[0]}.0" (any ${release[0]}.x from ${release[0]}.0) or ">=${release[0]}"`,
    );
  }
  return { clause: { operator, release, wildcard } };
}

/** Whether a Python version satisfies every clause (PEP 440 rules for release versions). */
export function matchesRequiresPython(spec: RequiresPython | string, version: PythonVersion): boolean {
  return failingClauses(spec, version).length === 0;
}

/** The clauses a Python version does not satisfy, in order; empty when it matches. */
export function failingClauses(
  spec: RequiresPython | string,
  version: PythonVersion,
): RequiresPythonClause[] {
  const value = typeof spec === "string" ? parsedOrThrow(spec) : spec;
  return value.clauses.filter((clause) => !clauseMatches(clause, version));
}

/** The clause as iCode prints it, such as `>=3.10` or `==3.11.*`. */
export function formatClause(clause: RequiresPythonClause): string {
  return `${clause.operator}${clause.release.join(".")}${clause.wildcard ? ".*" : ""}`;
}

function parsedOrThrow(specifier: string): RequiresPython {
  const parsed = parseRequiresPython(specifier);
  if (parsed.ok) return parsed.value;
  const first = parsed.issues[0]!;
  throw new WorkflowError("metadata_invalid", first.message, { hint: first.hint });
}

function clauseMatches(clause: RequiresPythonClause, version: PythonVersion): boolean {
  const candidate: readonly number[] = version;
  switch (clause.operator) {
    case "==":
      return clause.wildcard
        ? prefixMatches(candidate, clause.release)
        : compare(candidate, clause.release) === 0;
    case "!=":
      return clause.wildcard
        ? !prefixMatches(candidate, clause.release)
        : compare(candidate, clause.release) !== 0;
    case "<=":
      return compare(candidate, clause.release) <= 0;
    case ">=":
      return compare(candidate, clause.release) >= 0;
    case "<":
      return compare(candidate, clause.release) < 0;
    case ">":
      return compare(candidate, clause.release) > 0;
    case "~=":
      // PEP 440: `~=V.N` is `>=V.N, ==V.*`.
      return compare(candidate, clause.release) >= 0 && prefixMatches(candidate, clause.release.slice(0, -1));
  }
}

/** Release comparison with the shorter side padded with zeros: 3.10 == 3.10.0. */
function compare(left: readonly number[], right: readonly number[]): number {
  const length = Math.max(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** `==prefix.*`: the candidate, padded with zeros, starts with the prefix. */
function prefixMatches(candidate: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((component, index) => (candidate[index] ?? 0) === component);
}
