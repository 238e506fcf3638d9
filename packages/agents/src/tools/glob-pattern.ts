const SPECIAL = /[.*+?^${}()|[\]\\/]/gu;

function escapeRegExp(text: string): string {
  return text.replace(SPECIAL, "\\$&");
}

/** True when every `{` has its `}` (outside classes and escapes), so braces mean alternatives. */
function balancedBraces(glob: string): boolean {
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * A glob as a regular expression over `/`-separated relative paths: `*` and `?` stay within one path
 * segment, `**` as a whole segment spans any number of folders (`src/**\/*.ts` matches `src/a.ts` and
 * `src/x/y/a.ts`; `docs/**` matches everything under `docs`), `[abc]`, `[!abc]` and ranges are classes,
 * `{a,b}` are alternatives (nested too), and `\` escapes the next character. Dot files match like any other.
 */
export function globToRegExp(glob: string): RegExp {
  const braces = balancedBraces(glob);
  let out = "";
  let open = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegExp(glob[++i] as string);
    } else if (c === "*") {
      let j = i;
      while (glob[j] === "*") j++;
      const wholeSegment =
        j - i >= 2 && (i === 0 || glob[i - 1] === "/") && (j === glob.length || glob[j] === "/");
      if (!wholeSegment) out += "[^/]*";
      else if (j === glob.length) {
        // `a/**` is `a` and everything below it; a lone `**` is anything.
        out = i === 0 ? ".*" : `${out.slice(0, -2)}(?:/.*)?`;
      } else {
        out += "(?:[^/]+/)*";
        j++; // the `/` after `**`
      }
      i = j - 1;
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + (glob[i + 1] === "!" || glob[i + 1] === "^" ? 3 : 2));
      if (close === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, close);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^/" : ""}${body.replace(/[\\\]^]/gu, "\\$&")}]`;
      i = close;
    } else if (braces && c === "{") {
      out += "(?:";
      open++;
    } else if (braces && open > 0 && c === ",") {
      out += "|";
    } else if (braces && open > 0 && c === "}") {
      out += ")";
      open--;
    } else {
      out += escapeRegExp(c);
    }
  }
  return new RegExp(`^${out}$`);
}

/**
 * A filter for `grep`'s `glob` argument, as ripgrep reads it: a pattern without `/` matches the file name
 * at any depth (`*.ts`), one with `/` matches the path relative to the searched folder.
 */
export function globFilter(glob: string): (relativePath: string) => boolean {
  const re = globToRegExp(glob);
  if (glob.includes("/")) return (rel) => re.test(rel);
  return (rel) => re.test(rel.slice(rel.lastIndexOf("/") + 1));
}
