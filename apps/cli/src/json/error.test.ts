import { readFile } from "node:fs/promises";
import { PIPELINE_RUN_CODES, PIPELINE_STORE_CODES, RUN_REJECTION_CODES } from "@icode/workflow-engine";
import { describe, expect, it } from "vitest";
import { CLI_ERROR_CODES } from "./error";

/** The headings (`### \`code\``) of one `## ` section of docs/errors.md. */
async function headings(section: string): Promise<string[]> {
  const doc = await readFile(new URL("../../../../docs/errors.md", import.meta.url), "utf8");
  const start = Math.max(doc.indexOf(`\n## ${section}\n`), doc.indexOf(`\n# ${section}\n`));
  expect(start, section).toBeGreaterThan(0);
  const ends = [doc.indexOf("\n## ", start + 1), doc.indexOf("\n# ", start + 1)].filter((i) => i > 0);
  const end = ends.length === 0 ? doc.length : Math.min(...ends);
  return [...doc.slice(start, end).matchAll(/^### `([a-z_]+)`/gm)].map((m) => m[1]!);
}

describe("CLI_ERROR_CODES", () => {
  it("each code has a heading in docs/errors.md: the rejections with the engine's, the rest under CLI error codes", async () => {
    const rejections = new Set<string>(RUN_REJECTION_CODES);
    const pipeline = [...PIPELINE_STORE_CODES, ...PIPELINE_RUN_CODES];
    const store = new Set<string>(pipeline);
    expect((await headings("CLI error codes")).sort()).toEqual(
      CLI_ERROR_CODES.filter((c) => !rejections.has(c) && !store.has(c)).sort(),
    );
    // The pipeline store's refusals are told with the pipeline codes.
    expect(await headings("Pipeline codes")).toEqual(expect.arrayContaining([...PIPELINE_STORE_CODES]));
    expect(await headings("Pipeline run codes")).toEqual(expect.arrayContaining([...PIPELINE_RUN_CODES]));
    // `trust_write_failed` is told with the trust store ("Trust and discovery extras").
    const told = [
      ...(await headings("Run rejection codes")),
      ...(await headings("Trust and discovery extras")),
    ];
    expect(told).toEqual(expect.arrayContaining([...RUN_REJECTION_CODES]));
  });
});
