import { describe, expect, it } from "vitest";
import { agent, model } from "../test/fixtures";
import { matchModel, matchProfile } from "./match";

describe("agent profile matching (workflow reference)", () => {
  const profiles = [
    agent({ name: "Reviewer", id: "aaaaaaaaaaaa", display_name: "Code review" }),
    agent({ name: "Writer", id: "bbbbbbbbbbbb", display_name: "Docs" }),
    agent({ name: "Docs", id: "cccccccccccc", display_name: "Writer" }),
    agent({ name: "Twin", id: "dddddddddddd", display_name: "Same" }),
    agent({ name: "Other", id: "eeeeeeeeeeee", display_name: "Same" }),
    agent({ name: "Case", id: "ffffffffffff" }),
    agent({ name: "case", id: "111111111111" }),
    agent({ name: "reviewer2", id: "222222222222", display_name: "Alpha" }),
    agent({ name: "Beta", id: "333333333333", display_name: "alpha" }),
    agent({ name: "DupA", id: "999999999999" }),
    agent({ name: "DupB", id: "999999999999" }),
    agent({ name: "NoId", id: null }),
  ];
  const config = { profiles };

  it.each([
    ["id", "aaaaaaaaaaaa", "Reviewer", "id"],
    ["exact name", "Reviewer", "Reviewer", "name"],
    ["exact name before a display name", "Writer", "Writer", "name"],
    ["exact display name", "Code review", "Reviewer", "display_name"],
    ["exact name wins over another's display name", "Docs", "Docs", "name"],
    ["case-insensitive name", "REVIEWER", "Reviewer", "name_ignoring_case"],
    ["case-insensitive display name", "code REVIEW", "Reviewer", "display_name_ignoring_case"],
    ["exact case beats case-insensitive", "case", "case", "name"],
    ["exact display name before case-insensitive names", "Alpha", "reviewer2", "display_name"],
  ])("%s", (_t, selector, name, step) => {
    const found = matchProfile(config, selector);
    expect(found).toMatchObject({ ok: true, step });
    if (found.ok) expect(found.profile.name).toBe(name);
  });

  it.each([
    ["two profiles with the same id", "999999999999", 2],
    ["two exact display names", "Same", 2],
    ["two names equal ignoring case", "CASE", 2],
    ["two display names equal ignoring case", "ALPHA", 2],
  ])("%s is ambiguous at the step that matches", (_t, selector, count) => {
    const found = matchProfile(config, selector);
    expect(found).toMatchObject({ ok: false, code: "agent_profile_ambiguous" });
    if (!found.ok) {
      expect(found.candidates).toHaveLength(count);
      expect(found.message).toContain(selector);
      expect(found.hint).toContain("id");
    }
  });

  it("reports a missing profile", () => {
    expect(matchProfile(config, "Nobody")).toMatchObject({
      ok: false,
      code: "agent_profile_missing",
      candidates: [],
    });
  });

  it("never matches a profile without id by an empty selector, nor an empty display name", () => {
    expect(matchProfile(config, "")).toMatchObject({ ok: false, code: "agent_profile_missing" });
  });
});

describe("model selector matching", () => {
  const models = [
    model({ id: "aaaaaaaaaaaa", name: "Local Qwen", model_id: "q" }),
    model({ id: "bbbbbbbbbbbb", name: "Claude", model_id: "c" }),
    model({ id: "cccccccccccc", name: "claude", model_id: "c2" }),
    model({ id: "Claude", name: "By id", model_id: "x" }),
    model({ id: "dddddddddddd", name: "Broken" }),
    model({ id: "eeeeeeeeeeee", name: "Twin", model_id: "t" }),
    model({ id: "ffffffffffff", name: "twin", model_id: "t" }),
    model({ id: "eeeeeeeeeeee", name: "Dup id", model_id: "t" }),
  ];
  const config = { models };

  it.each([
    ["exact id", "aaaaaaaaaaaa", "Local Qwen", "id"],
    ["id before name", "Claude", "By id", "id"],
    ["exact name", "claude", "claude", "name"],
    ["case-insensitive name", "local qwen", "Local Qwen", "name_ignoring_case"],
  ])("%s", (_t, selector, name, step) => {
    const found = matchModel(config, selector);
    expect(found).toMatchObject({ ok: true, step });
    if (found.ok) expect(found.model.name).toBe(name);
  });

  it.each([
    ["same name ignoring case", "TWIN", "model_ambiguous"],
    ["same id", "eeeeeeeeeeee", "model_ambiguous"],
    ["missing", "gpt-9", "model_unresolvable"],
    ["unusable", "Broken", "model_unresolvable"],
  ])("%s", (_t, selector, code) => {
    const found = matchModel(config, selector);
    expect(found).toMatchObject({ ok: false, code });
  });

  it("says why an unusable profile cannot be chosen", () => {
    const found = matchModel(config, "Broken");
    expect(!found.ok && found.message).toContain("model_id is not set");
  });
});
