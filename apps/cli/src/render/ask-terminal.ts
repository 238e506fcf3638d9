import type { Answer, AskHandler, AskResponse, Question } from "@icode/workflow-engine";
import type { CliIo } from "../io";
import { oneLine } from "./flatten";

/**
 * `icode workflow run --interactive`: answers `ctx.ask` on the terminal (standard input in raw mode, the
 * questions on standard error). One dialog at a time; the questions of a dialog one after the other. A
 * question shows its header, its text and its options; ↑/↓ move, a number picks (single-select) or toggles
 * (multi-select), space toggles, typing writes an answer of one's own (or a note to a selection), Enter
 * submits, an empty Enter twice skips. The question is withdrawn when its attempt ends (the node's timeout
 * counts the waiting, as the reference says). Ctrl-C interrupts the run, as it does without a question.
 */
export interface TerminalAsker {
  readonly ask: AskHandler;
  /** Writes lines to stderr now, or after the question on the terminal is answered. */
  say(lines: readonly string[]): void;
  close(): void;
}

const CLEAR_BELOW = "\u001b[J";
const up = (n: number) => (n > 0 ? `\u001b[${n}A` : "");

export function askOnTerminal(io: CliIo): TerminalAsker {
  let busy = false;
  let held: string[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  const write = (text: string) => io.stderr.write(text);
  const flush = () => {
    for (const line of held) write(`${line}\n`);
    held = [];
  };
  return {
    ask(request, context) {
      const turn = queue.then(async (): Promise<AskResponse> => {
        if (context.signal.aborted) return { status: "cancelled" };
        busy = true;
        try {
          const answers: Answer[] = [];
          for (const [i, question] of request.questions.entries()) {
            const title =
              request.questions.length > 1 ? ` (question ${i + 1} of ${request.questions.length})` : "";
            const answer = await askOne(io, question, `${context.nodeId}${title}`, context.signal);
            if (answer === null) {
              write("  (withdrawn: the node's attempt ended before an answer)\n");
              return { status: "cancelled" };
            }
            answers.push(answer);
          }
          return { status: "answered", answers };
        } finally {
          busy = false;
          flush();
        }
      });
      queue = turn.catch(() => undefined);
      return turn;
    },
    say(lines) {
      if (busy) held.push(...lines);
      else for (const line of lines) write(`${line}\n`);
    },
    close() {
      flush();
    },
  };
}

/** One key of a chunk of terminal input: an escape sequence (`\x1b[A`) or one character. */
function keys(chunk: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < chunk.length; ) {
    const sequence = /^\u001b\[[0-9;]*[A-Za-z~]/.exec(chunk.slice(i));
    const key = sequence?.[0] ?? String.fromCodePoint(chunk.codePointAt(i)!);
    out.push(key);
    i += key.length;
  }
  return out;
}

/** Asks one question; `null` when `signal` ended it first. */
function askOne(io: CliIo, question: Question, who: string, signal: AbortSignal): Promise<Answer | null> {
  const labels = question.options.map((o) => o.label);
  const multi = question.multi_select;
  const width = Math.max(20, (io.terminal.columns ?? 80) - 1);
  const fit = (line: string) =>
    Array.from(line).length > width
      ? `${Array.from(line)
          .slice(0, width - 1)
          .join("")}…`
      : line;
  const head =
    question.header === ""
      ? `? ${oneLine(who)} asks:`
      : `? ${oneLine(who)} asks · ${oneLine(question.header)}:`;
  io.stderr.write(`${head}\n`);
  for (const line of question.question.split(/\r?\n/)) io.stderr.write(`  ${oneLine(line)}\n`);

  let cursor = 0;
  const chosen = new Set<number>();
  let text = "";
  let confirmSkip = false;
  let drawn = 0;
  const help =
    labels.length === 0
      ? "type your answer · Enter submits · Enter on nothing twice skips"
      : multi
        ? `↑/↓ move · space or 1-${labels.length} select · type a note · Enter submits`
        : `↑/↓ move · 1-${labels.length} or Enter picks · or type your own answer · Enter submits`;
  const draw = () => {
    const lines = question.options.map((o, i) => {
      const mark = multi ? (chosen.has(i) ? "[x] " : "[ ] ") : "";
      const description = o.description === "" ? "" : ` — ${oneLine(o.description)}`;
      return fit(`  ${i === cursor ? "›" : " "} ${i + 1}. ${mark}${oneLine(o.label)}${description}`);
    });
    lines.push(fit(`  ${confirmSkip ? "press Enter again to skip this question" : help}`));
    lines.push(`  > ${text}`);
    io.stderr.write(`${up(drawn - 1)}\r${CLEAR_BELOW}${lines.join("\n")}`);
    drawn = lines.length;
  };
  const settle = (answer: Answer) => {
    const shown =
      answer.selected.length === 0 && answer.text === ""
        ? "(skipped)"
        : [answer.selected.join(", "), answer.text].filter((part) => part !== "").join(" — ");
    io.stderr.write(`${up(drawn - 1)}\r${CLEAR_BELOW}  → ${oneLine(shown)}\n`);
    drawn = 0;
  };

  return new Promise<Answer | null>((resolve) => {
    const stdin = io.stdin;
    const finish = (answer: Answer | null) => {
      stdin.off("data", onData);
      signal.removeEventListener("abort", onAbort);
      stdin.setRawMode?.(false);
      stdin.pause();
      if (answer === null) {
        io.stderr.write(`${up(drawn - 1)}\r${CLEAR_BELOW}`);
      } else settle(answer);
      resolve(answer);
    };
    const onAbort = () => finish(null);
    const submit = () => {
      const typed = text.trim();
      const exact = labels.indexOf(typed);
      if (multi) {
        const selected = labels.filter((_, i) => chosen.has(i) || i === exact);
        if (selected.length === 0 && typed === "" && !confirmSkip) {
          confirmSkip = true;
          return;
        }
        return finish({ selected, text: exact === -1 ? typed : "" });
      }
      if (typed !== "")
        return finish(exact === -1 ? { selected: [], text: typed } : { selected: [typed], text: "" });
      if (labels.length > 0) return finish({ selected: [labels[cursor]!], text: "" });
      if (!confirmSkip) {
        confirmSkip = true;
        return;
      }
      finish({ selected: [], text: "" });
    };
    const onData = (chunk: Buffer | string) => {
      for (const key of keys(typeof chunk === "string" ? chunk : chunk.toString("utf8"))) {
        if (key === "\u0003") {
          // Raw mode turns Ctrl-C into a key: give it back to the process as the signal it is.
          process.kill(process.pid, "SIGINT");
          return;
        }
        const wasConfirming = confirmSkip;
        if (key === "\r" || key === "\n") {
          submit();
          if (drawn === 0) return; // answered
        } else if (key === "\u001b[A") cursor = (cursor + labels.length - 1) % Math.max(1, labels.length);
        else if (key === "\u001b[B") cursor = (cursor + 1) % Math.max(1, labels.length);
        else if (key === " " && multi && text === "" && labels.length > 0) {
          if (chosen.has(cursor)) chosen.delete(cursor);
          else chosen.add(cursor);
        } else if (/^[1-9]$/.test(key) && text === "" && Number(key) <= labels.length) {
          const index = Number(key) - 1;
          cursor = index;
          if (!multi) return finish({ selected: [labels[index]!], text: "" });
          if (chosen.has(index)) chosen.delete(index);
          else chosen.add(index);
        } else if (key === "\u007f" || key === "\b") text = Array.from(text).slice(0, -1).join("");
        else if (key >= " " && !key.startsWith("\u001b")) text += key;
        if (wasConfirming) confirmSkip = false;
        draw();
      }
    };
    signal.addEventListener("abort", onAbort, { once: true });
    stdin.setRawMode?.(true);
    stdin.on("data", onData);
    stdin.resume();
    draw();
  });
}
