import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PUBLISHED_SCHEMAS } from "./published";

const SCHEMAS_DIR = join(import.meta.dirname, "..", "..", "schemas");

/**
 * The CLI's JSON shapes, published as JSON Schemas in `apps/cli/schemas/` (generated from the zod schemas;
 * a changed shape fails here until the file is regenerated with `vitest -u` and reviewed).
 */
describe("published JSON Schemas", () => {
  for (const [name, schema] of Object.entries(PUBLISHED_SCHEMAS)) {
    it(`schemas/${name}.schema.json is generated from its zod schema`, async () => {
      const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" });
      const text = `${JSON.stringify({ title: name, ...json }, null, 2)}\n`;
      await expect(text).toMatchFileSnapshot(join(SCHEMAS_DIR, `${name}.schema.json`));
    });
  }

  it("publishes no schema that is not generated", () => {
    expect(readdirSync(SCHEMAS_DIR).sort()).toEqual(
      Object.keys(PUBLISHED_SCHEMAS)
        .map((name) => `${name}.schema.json`)
        .sort(),
    );
  });
});
