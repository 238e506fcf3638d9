import { type AgentListing, formatContextTokens, type ModelListing } from "@icode/workflow-engine";
import { oneLine } from "./flatten";
import { renderTable } from "./table";

// The text of `icode agents` and `icode models` (agent-profiles.md 5): the cells of each row, the `-` of an
// empty cell, and the warning line of a load problem. The table layout itself is `renderTable`'s.

export const AGENT_COLUMNS = ["Default", "Name", "Display Name", "ID", "Model", "Source", "Description"];
export const MODEL_COLUMNS = ["Active", "ID", "Name", "Provider", "API", "Model", "Context", "Flags"];

/** A cell as shown: flattened to one line, `-` when empty. */
function cell(text: string): string {
  return text === "" ? "-" : oneLine(text);
}

/** The rows of `icode agents`, in the listing's order (name ignoring case). */
export function agentRows(listing: AgentListing): string[][] {
  return listing.agents.map((a) =>
    [a.default ? "*" : "", a.name, a.displayName, a.id, a.model, a.source, a.description].map(cell),
  );
}

/** The rows of `icode models`, in the listing's order (name ignoring case, then id). */
export function modelRows(listing: ModelListing): string[][] {
  return listing.models.map((m) =>
    [
      m.active ? "*" : "",
      m.id,
      m.name,
      m.provider,
      m.apiStyle === "responses" ? "responses" : "chat",
      m.modelId,
      formatContextTokens(m.maxContextTokens),
      [m.stream ? "stream" : "", m.vision ? "vision" : ""].filter((f) => f !== "").join(","),
    ].map(cell),
  );
}

/** The stdout of `icode agents`: the table, or `No agent profiles found.` when there is none. */
export function agentsText(listing: AgentListing): string {
  return listing.agents.length === 0
    ? "No agent profiles found.\n"
    : renderTable(AGENT_COLUMNS, agentRows(listing));
}

/** The stdout of `icode models`: the table, or `No model profiles found.` when there is none. */
export function modelsText(listing: ModelListing): string {
  return listing.models.length === 0
    ? "No model profiles found.\n"
    : renderTable(MODEL_COLUMNS, modelRows(listing));
}

type Problem = AgentListing["problems"][number];

/**
 * `Warning: <file>:<line>: <field>: <message>`. A part that is unknown is left out with its separator:
 * `Warning: <file>: <message>` for a file-level problem, `Warning: <field>: <message>` for a setting that
 * came from an environment variable (no file).
 */
export function warningLine(p: Problem): string {
  const where = p.file === null ? "" : p.line === null ? `${p.file}: ` : `${p.file}:${p.line}: `;
  const field = p.field === null ? "" : `${p.field}: `;
  return oneLine(`Warning: ${where}${field}${p.message}`);
}
