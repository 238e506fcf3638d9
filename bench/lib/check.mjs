// Checks that an engine run really did the work: a completed outcome and the expected output. Shared by the
// engine-API child (results of `engine.run`) and the harness (the CLI's `--json` result).

/**
 * Throws unless `result` is a completed run whose single output matches `expect`:
 * `{ kind: "echo", text }` (the input came back), `{ kind: "fanout", n, first? }` (the default merge of `n`
 * branches, the first named `first`, by default `b0`)
 * or `{ kind: "value", part }` (four strings of `part` characters in `data`).
 */
export function checkRunResult(result, expect) {
  if (result === null || typeof result !== "object") throw new Error(`run returned ${String(result)}`);
  if (result.status === "rejected") {
    throw new Error(
      `run rejected: ${result.code}: ${result.message}${result.hint ? ` (${result.hint})` : ""}`,
    );
  }
  if (result.outcome !== "completed") {
    const detail = [result.reason, result.node_id, result.error].filter(Boolean).join(" · ");
    throw new Error(
      `run outcome ${JSON.stringify(result.outcome)}, expected "completed"${detail ? ` (${detail})` : ""}`,
    );
  }
  const outputs = Array.isArray(result.outputs) ? result.outputs : [];
  if (outputs.length !== 1) throw new Error(`run returned ${outputs.length} outputs, expected 1`);
  const output = outputs[0].value ?? outputs[0];
  if (expect.kind === "echo" && output.text !== expect.text) {
    throw new Error(
      `output text ${JSON.stringify(String(output.text).slice(0, 80))}, expected ${JSON.stringify(expect.text)}`,
    );
  }
  if (expect.kind === "fanout") {
    const first = expect.first ?? "b0";
    const parts = String(output.text).split("\n\n");
    if (parts.length !== expect.n || !parts[0].startsWith(`## ${first}\n`)) {
      throw new Error(
        `fan-out output holds ${parts.length} sections, expected ${expect.n} starting with "## ${first}"`,
      );
    }
  }
  if (expect.kind === "value") {
    const lengths = Array.isArray(output.data) ? output.data.map((part) => String(part).length) : [];
    if (lengths.length !== 4 || lengths.some((length) => length !== expect.part)) {
      throw new Error(
        `value output has parts of ${JSON.stringify(lengths)} characters, expected 4 × ${expect.part}`,
      );
    }
  }
}
