const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/iu;
// C0 controls, DEL and C1 controls, plus the characters Windows forbids in file names.
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f/\\:*?"<>|]/u;

/**
 * Why `name` cannot be a profile name (it becomes the file name `<name>.yaml`, so it must be portable), or
 * null when it can. `name` is already trimmed.
 */
export function profileNameProblem(name: string): string | null {
  if (name === "") return "the name is empty";
  const bad = FORBIDDEN.exec(name);
  if (bad !== null) {
    const ch = bad[0];
    const shown = /[\u0000-\u001f\u007f-\u009f]/u.test(ch)
      ? `the control character U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`
      : `"${ch}"`;
    return `it contains ${shown}; names may not contain / \\ : * ? " < > | or control characters`;
  }
  if (name === "." || name === "..") return `"${name}" cannot be a file name`;
  if (name.endsWith(".") || name.endsWith(" ")) return "it ends in a dot or a space, which Windows drops";
  // `CON.yaml` (and `CON.x.yaml`) name the console device on Windows.
  if (WINDOWS_DEVICE.test(name.split(".")[0] ?? ""))
    return "it is a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
  return null;
}

/** The recommended form that profile editors enforce: a letter or digit, then letters, digits, `-`, `_`. */
export const RECOMMENDED_PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/u;
