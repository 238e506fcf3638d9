/**
 * A small POSIX-shell reader for command filtering: splits a command line into simple commands (segments)
 * at `|`, `||`, `&&`, `;`, `&`, `|&` and newlines, removes quotes, and notes unquoted redirections and
 * command substitutions. Substitutions inside double quotes still run in a shell, so they count too; only
 * single quotes (and backslashes) make `$(`, `` ` `` and `>` literal. It reads; it never runs anything.
 */
export interface ShellSegment {
  /** Words after quote removal, redirections and their targets left out. */
  words: string[];
  /** Redirection operators and their targets (`>`, `out.txt`). */
  redirections: { op: string; target: string }[];
}

export interface ShellParse {
  segments: ShellSegment[];
  /** Command lines found inside `$(…)`, backticks, `<(…)`, `>(…)` and `( … )` groups. */
  substitutions: string[];
  /** True when the line has an unquoted redirection (`>`, `>>`, `<`, `<<`, `&>`, `<(…)` …). */
  redirects: boolean;
  /** True when the line has command substitution, process substitution or a `( … )` subshell. */
  subshells: boolean;
  /** The line could not be read to its end (an unclosed quote or substitution). */
  unterminated: boolean;
}

export function parseShell(line: string): ShellParse {
  const out: ShellParse = {
    segments: [],
    substitutions: [],
    redirects: false,
    subshells: false,
    unterminated: false,
  };
  let words: string[] = [];
  let redirections: ShellSegment["redirections"] = [];
  let word: string | null = null;
  let pendingRedirect: string | null = null;
  const endWord = () => {
    if (word === null) return;
    if (pendingRedirect !== null) {
      redirections.push({ op: pendingRedirect, target: word });
      pendingRedirect = null;
    } else words.push(word);
    word = null;
  };
  const endSegment = () => {
    endWord();
    if (words.length > 0 || redirections.length > 0) out.segments.push({ words, redirections });
    words = [];
    redirections = [];
  };
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) {
        out.unterminated = true;
        word = (word ?? "") + line.slice(i + 1);
        break;
      }
      word = (word ?? "") + line.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let text = "";
      while (j < n && line[j] !== '"') {
        const d = line[j] as string;
        if (d === "\\" && j + 1 < n) {
          text += line[j + 1];
          j += 2;
          continue;
        }
        if ((d === "$" && line[j + 1] === "(") || d === "`") {
          const sub = readSubstitution(line, d === "`" ? j : j + 1, d === "`");
          out.subshells = true;
          out.substitutions.push(sub.inner);
          if (sub.end < 0) {
            out.unterminated = true;
            j = n;
            break;
          }
          text += line.slice(j, sub.end);
          j = sub.end;
          continue;
        }
        text += d;
        j += 1;
      }
      if (j >= n) out.unterminated = true;
      word = (word ?? "") + text;
      i = j + 1;
      continue;
    }
    if (c === "\\") {
      if (line[i + 1] === "\n") {
        i += 2;
        continue;
      }
      word = (word ?? "") + (line[i + 1] ?? "");
      i += 2;
      continue;
    }
    if (c === "#" && word === null) {
      const end = line.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if ((c === "$" && line[i + 1] === "(") || c === "`") {
      const sub = readSubstitution(line, c === "`" ? i : i + 1, c === "`");
      out.subshells = true;
      out.substitutions.push(sub.inner);
      if (sub.end < 0) {
        out.unterminated = true;
        break;
      }
      word = (word ?? "") + line.slice(i, sub.end);
      i = sub.end;
      continue;
    }
    if ((c === "<" || c === ">") && line[i + 1] === "(") {
      const sub = readSubstitution(line, i + 1, false);
      out.subshells = true;
      out.redirects = true;
      out.substitutions.push(sub.inner);
      if (sub.end < 0) {
        out.unterminated = true;
        break;
      }
      word = (word ?? "") + line.slice(i, sub.end);
      i = sub.end;
      continue;
    }
    if (c === "(" && word === null) {
      const sub = readSubstitution(line, i, false);
      out.subshells = true;
      out.substitutions.push(sub.inner);
      endSegment();
      if (sub.end < 0) {
        out.unterminated = true;
        break;
      }
      i = sub.end;
      continue;
    }
    if (c === ">" || c === "<" || (c === "&" && line[i + 1] === ">")) {
      // A file-descriptor number right before the operator (2>) belongs to it.
      if (word !== null && /^\d+$/u.test(word) && !line.slice(0, i).endsWith(" ")) word = null;
      endWord();
      const op = /^(&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)/u.exec(line.slice(i))?.[0] ?? c;
      out.redirects = true;
      pendingRedirect = op;
      i += op.length;
      continue;
    }
    if (c === "|" || c === ";" || c === "&" || c === "\n") {
      endSegment();
      const op = /^(\|\||&&|\|&|;;|\||;|&|\n)/u.exec(line.slice(i))?.[0] ?? c;
      i += op.length;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i += 1;
      continue;
    }
    word = (word ?? "") + c;
    i += 1;
  }
  endSegment();
  if (pendingRedirect !== null) redirections.push({ op: pendingRedirect, target: "" });
  return out;
}

/**
 * Reads from an opening `(` (or backtick) to its match, honouring quotes and nesting; returns the text
 * inside and the index after the closing character, or -1 when it is not closed.
 */
function readSubstitution(line: string, open: number, backtick: boolean): { inner: string; end: number } {
  if (backtick) {
    let j = open + 1;
    while (j < line.length && line[j] !== "`") j += line[j] === "\\" ? 2 : 1;
    return j >= line.length
      ? { inner: line.slice(open + 1), end: -1 }
      : { inner: line.slice(open + 1, j), end: j + 1 };
  }
  let depth = 0;
  let j = open;
  while (j < line.length) {
    const c = line[j];
    if (c === "\\") {
      j += 2;
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", j + 1);
      if (end < 0) break;
      j = end + 1;
      continue;
    }
    if (c === '"') {
      j += 1;
      while (j < line.length && line[j] !== '"') j += line[j] === "\\" ? 2 : 1;
      j += 1;
      continue;
    }
    if (c === "(") depth += 1;
    if (c === ")") {
      depth -= 1;
      if (depth === 0) return { inner: line.slice(open + 1, j), end: j + 1 };
    }
    j += 1;
  }
  return { inner: line.slice(open + 1), end: -1 };
}

/** `NAME=value` before a command sets a variable; it is not the command. */
export function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/u.test(word);
}

/** The command name of a segment: its first word that is not a variable assignment, or null. */
export function commandName(segment: ShellSegment): { name: string; index: number } | null {
  const index = segment.words.findIndex((w) => !isAssignment(w));
  return index < 0 ? null : { name: segment.words[index] as string, index };
}
