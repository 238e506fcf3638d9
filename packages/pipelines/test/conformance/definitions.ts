import { describe, expect, it } from "vitest";
import {
  builtinPipelines,
  checkRunnable,
  installBuiltinPipelines,
  type PipelineBindings,
  StoredDefinitionSchema,
} from "../../src/index";
import { chain, codeOf, rejection, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function definitionConformance(name: string, init: StoreInit): void {
  describe(`${name}: definitions and their lifecycle`, () => {
    const fx = useFixture(init);

    it("creates a user draft at revision 1 with its defaults, an ID made from its name, unique", async () => {
      const { store, clock } = fx();
      const first = await store.createDefinition(chain("Plan & Build!"));
      expect(StoredDefinitionSchema.parse(first)).toEqual(first);
      expect(first).toMatchObject({
        id: "plan-build",
        name: "Plan & Build!",
        status: "draft",
        revision: 1,
        source: "user",
        locked: false,
        published_at: null,
        created_at: new Date(clock.now()).toISOString(),
      });
      expect(first.definition).toMatchObject({
        description: "",
        failure_policy: "pause",
        auto_supervise: true,
      });
      expect(first.definition.nodes[1]).toMatchObject({
        runtime: "auto",
        depends_on: ["plan"],
        output_schema: null,
      });
      expect((await store.createDefinition(chain("Plan & Build!"))).id).toBe("plan-build-2");
      expect((await store.createDefinition(chain(), { id: "mine" })).id).toBe("mine");
      expect(await codeOf(() => store.createDefinition(chain(), { id: "mine" }))).toBe(
        "pipeline_definition_exists",
      );
      expect(await codeOf(() => store.createDefinition(chain(), { id: "Bad ID" }))).toBe(
        "pipeline_invalid_id",
      );
      expect(await codeOf(() => store.createDefinition(chain(), { id: "builtin/x" }))).toBe(
        "pipeline_invalid_id",
      );
      expect(await codeOf(() => store.getDefinition("nope"))).toBe("pipeline_definition_not_found");
    });

    it("refuses a definition outside the schema, with the diagnostics that say why", async () => {
      const { store } = fx();
      const error = await rejection(() =>
        store.createDefinition({ name: "x", nodes: [{ id: "a", name: "A" }] }),
      );
      expect(error.code).toBe("pipeline_definition_invalid");
      expect(error.diagnostics.map((d) => [d.code, d.pointer])).toEqual([
        ["pipeline_field_missing", "/nodes/0/prompt_template"],
      ]);
      expect(await store.listDefinitions()).toEqual([]);
    });

    it("keeps a draft that fails the graph checks, and refuses to publish it until it passes", async () => {
      const { store } = fx();
      const cyclic = chain();
      cyclic.nodes[0]!.depends_on = ["build"];
      const draft = await store.createDefinition(cyclic);
      const error = await rejection(() => store.publishDefinition(draft.id));
      expect(error.code).toBe("pipeline_definition_invalid");
      expect(error.diagnostics.map((d) => d.code)).toContain("pipeline_dependency_cycle");
      expect((await store.getDefinition(draft.id)).status).toBe("draft");
      const fixed = await store.updateDefinition(draft.id, chain(), { expected_revision: 1 });
      const live = await store.publishDefinition(draft.id, { expected_revision: fixed.revision });
      expect(live).toMatchObject({ status: "published", revision: 3 });
      expect(live.published_at).not.toBeNull();
    });

    it("increments the revision on every change and refuses a stale expected_revision", async () => {
      const { store, clock } = fx();
      const draft = await store.createDefinition(chain());
      clock.advance(1000);
      const renamed = await store.updateDefinition(draft.id, chain("Renamed"), { expected_revision: 1 });
      expect(renamed).toMatchObject({
        revision: 2,
        name: "Renamed",
        updated_at: new Date(clock.now()).toISOString(),
      });
      expect(renamed.created_at).toBe(draft.created_at);
      const stale = await rejection(() =>
        store.updateDefinition(draft.id, chain("Other"), { expected_revision: 1 }),
      );
      expect(stale.code).toBe("pipeline_revision_conflict");
      expect(stale.message).toContain("revision 2");
      expect(await codeOf(() => store.publishDefinition(draft.id, { expected_revision: 1 }))).toBe(
        "pipeline_revision_conflict",
      );
      expect(await codeOf(() => store.deleteDefinition(draft.id, { expected_revision: 1 }))).toBe(
        "pipeline_revision_conflict",
      );
      // Without expected_revision the change is made whatever the revision.
      expect((await store.updateDefinition(draft.id, chain("Third"))).revision).toBe(3);
      expect((await store.publishDefinition(draft.id)).revision).toBe(4);
      // Changing nothing is not a change.
      expect(
        (await store.updateDefinition(draft.id, chain("Third"), { expected_revision: 4 })).revision,
      ).toBe(4);
      expect((await store.publishDefinition(draft.id, { expected_revision: 4 })).revision).toBe(4);
      await store.deleteDefinition(draft.id, { expected_revision: 4 });
      expect(await codeOf(() => store.getDefinition(draft.id))).toBe("pipeline_definition_not_found");
    });

    it("keeps a published definition runnable: an update must pass validation", async () => {
      const { store } = fx();
      const draft = await store.createDefinition(chain());
      await store.publishDefinition(draft.id);
      const broken = chain();
      broken.nodes[1]!.depends_on = ["gone"];
      const error = await rejection(() => store.updateDefinition(draft.id, broken));
      expect(error.code).toBe("pipeline_definition_invalid");
      expect(error.diagnostics.map((d) => d.code)).toContain("pipeline_unknown_dependency");
      expect(await store.getDefinition(draft.id)).toMatchObject({ status: "published", revision: 2 });
      expect(await store.updateDefinition(draft.id, chain("Still valid"))).toMatchObject({
        status: "published",
        revision: 3,
      });
    });

    it("checks profiles and models when publishing with bindings", async () => {
      const { store } = fx();
      const withProfile = chain();
      withProfile.nodes[0]!.profile_id = "Reviewer";
      const draft = await store.createDefinition(withProfile);
      const bindings: PipelineBindings = {
        resolveProfile: (id) => ({
          ok: false,
          code: "agent_profile_missing",
          message: `no agent profile matches "${id}" by id, name or display name`,
          hint: "icode agents lists the profiles",
          candidates: [],
        }),
        resolveModel: () => {
          throw new Error("no model to resolve here");
        },
      };
      const error = await rejection(() => store.publishDefinition(draft.id, { bindings }));
      expect(error.diagnostics.map((d) => [d.code, d.stage, d.pointer])).toEqual([
        ["agent_profile_missing", "bindings", "/nodes/0/profile_id"],
      ]);
      expect((await store.publishDefinition(draft.id)).status).toBe("published");
    });

    it("tells a draft from a runnable definition", async () => {
      const { store } = fx();
      const draft = await store.createDefinition(chain());
      expect(checkRunnable(draft)).toMatchObject({ ok: false, code: "pipeline_definition_draft" });
      expect(checkRunnable(await store.publishDefinition(draft.id))).toEqual({ ok: true });
    });

    it("installs the built-ins locked and published; locked ones are copied, never edited", async () => {
      const { store } = fx();
      const result = await installBuiltinPipelines(store);
      const ids = builtinPipelines().map((b) => b.id);
      expect(result).toEqual({ added: ids, updated: [], unchanged: [], removed: [] });
      expect(ids).toHaveLength(3);
      expect(await installBuiltinPipelines(store)).toEqual({
        added: [],
        updated: [],
        unchanged: ids,
        removed: [],
      });
      const builtin = await store.getDefinition(ids[0]!);
      expect(builtin).toMatchObject({ source: "builtin", locked: true, status: "published", revision: 1 });
      for (const attempt of [
        () => store.updateDefinition(builtin.id, chain()),
        () => store.publishDefinition(builtin.id),
        () => store.deleteDefinition(builtin.id),
      ]) {
        const error = await rejection(attempt);
        expect(error.code).toBe("pipeline_definition_locked");
        expect(error.hint).toContain("copy");
      }
      const copy = await store.copyDefinition(builtin.id);
      expect(copy).toMatchObject({
        source: "user",
        locked: false,
        status: "draft",
        revision: 1,
        name: `${builtin.name} (copy)`,
      });
      expect(copy.definition.nodes).toEqual(builtin.definition.nodes);
      expect((await store.updateDefinition(copy.id, chain())).revision).toBe(2);
      const named = await store.copyDefinition(builtin.id, { id: "my-review", name: "My review" });
      expect(named).toMatchObject({ id: "my-review", name: "My review" });
      expect((await store.listDefinitions({ source: "builtin" })).map((d) => d.id)).toEqual([...ids].sort());
      expect((await store.listDefinitions({ status: "draft" })).map((d) => d.id).sort()).toEqual(
        [copy.id, "my-review"].sort(),
      );
    });

    it("updates a managed definition only when its content changes, and removes it on request", async () => {
      const { store } = fx();
      const entry = { id: "acme/triage", source: "extension" as const, definition: chain("Triage") };
      expect(await store.putManagedDefinition(entry)).toMatchObject({
        revision: 1,
        locked: true,
        source: "extension",
        status: "published",
      });
      expect((await store.putManagedDefinition(entry)).revision).toBe(1);
      expect((await store.putManagedDefinition({ ...entry, definition: chain("Triage 2") })).revision).toBe(
        2,
      );
      expect(await codeOf(() => store.putManagedDefinition({ ...entry, id: "builtin/triage" }))).toBe(
        "pipeline_invalid_id",
      );
      expect(await codeOf(() => store.putManagedDefinition({ ...entry, id: "triage" }))).toBe(
        "pipeline_invalid_id",
      );
      expect(await codeOf(() => store.putManagedDefinition({ ...entry, source: "builtin" }))).toBe(
        "pipeline_invalid_id",
      );
      const cyclic = chain();
      cyclic.nodes[0]!.depends_on = ["build"];
      expect(await codeOf(() => store.putManagedDefinition({ ...entry, definition: cyclic }))).toBe(
        "pipeline_definition_invalid",
      );
      await store.createDefinition(chain(), { id: "mine" });
      expect(await codeOf(() => store.deleteManagedDefinition("mine"))).toBe("pipeline_invalid_id");
      await store.deleteManagedDefinition(entry.id);
      expect(await codeOf(() => store.getDefinition(entry.id))).toBe("pipeline_definition_not_found");
    });

    it("exports JSON that imports again as the same definition", async () => {
      const { store } = fx();
      const draft = await store.createDefinition(chain());
      const text = await store.exportDefinition(draft.id);
      expect(text.endsWith("}\n")).toBe(true);
      expect(JSON.parse(text)).toEqual(draft.definition);
      expect(JSON.parse(text)).not.toHaveProperty("status");
      const again = await store.importDefinition(text, { id: "again" });
      expect(again).toMatchObject({ id: "again", status: "draft", revision: 1, source: "user" });
      expect(again.definition).toEqual(draft.definition);
    });

    it("refuses to import text that is not a definition, with lines and pointers", async () => {
      const { store } = fx();
      const error = await rejection(() =>
        store.importDefinition('{\n  "name": "x",\n  "nodes": [\n', { file: "/w/x.json" }),
      );
      expect(error.code).toBe("pipeline_definition_invalid");
      expect(error.message).toContain("/w/x.json");
      expect(error.diagnostics[0]).toMatchObject({
        code: "pipeline_json_syntax",
        file: "/w/x.json",
        line: 4,
      });
      const lifecycle = await rejection(() =>
        store.importDefinition(JSON.stringify({ ...chain(), status: "published", revision: 7 })),
      );
      expect(lifecycle.diagnostics.map((d) => [d.code, d.pointer])).toEqual([
        ["pipeline_unknown_field", "/status"],
        ["pipeline_unknown_field", "/revision"],
      ]);
    });
  });
}
