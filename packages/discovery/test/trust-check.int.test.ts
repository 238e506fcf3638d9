import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkTrust,
  confirmTrust,
  encodedDefinition,
  sha256Hex,
  type TrustSubject,
  untrustedMessage,
} from "../src/index";
import { tempDir } from "./support/fs";

function subject(root: string, change: Partial<TrustSubject> = {}): TrustSubject {
  return {
    entry: path.join(root, ".chrys", "workflows", "echo.py"),
    workflowId: "echo",
    layout: "file",
    builtin: false,
    sourceDigest: sha256Hex("source"),
    environmentFingerprint: sha256Hex("env"),
    ...change,
  };
}

describe("checkTrust and confirmTrust", () => {
  it("needs no trust for a built-in workflow", async () => {
    const root = tempDir();
    const check = await checkTrust(subject(root, { builtin: true }), {
      chrysHome: root,
      uid: null,
      definitionDigest: null,
    });
    expect(check).toEqual({ required: false, trusted: true, changed: [], record: null });
  });

  it("is untrusted until confirmed, then names each part that changed", async () => {
    const root = tempDir();
    const home = path.join(root, "home");
    const options = { chrysHome: home, uid: null };
    const first = await checkTrust(subject(root), { ...options, definitionDigest: null });
    expect(first).toMatchObject({ required: true, trusted: false, changed: [], record: null });
    expect(untrustedMessage(subject(root), first)).toMatch(/is not trusted yet/);

    const definition = { nodes: ["a"] };
    const { digest } = encodedDefinition(definition);
    await confirmTrust(subject(root), { chrysHome: home, title: "Echo", definitionDigest: digest });
    expect(await checkTrust(subject(root), { ...options, definitionDigest: digest })).toMatchObject({
      trusted: true,
      changed: [],
    });
    // Before the definition is known, only source and environment are compared.
    expect(await checkTrust(subject(root), { ...options, definitionDigest: null })).toMatchObject({
      trusted: true,
    });
    const changed = await checkTrust(subject(root, { environmentFingerprint: sha256Hex("other") }), {
      ...options,
      definitionDigest: sha256Hex("new definition"),
    });
    expect(changed).toMatchObject({ trusted: false, changed: ["definition", "environment"] });
    expect(untrustedMessage(subject(root), changed)).toBe(
      "workflow 'echo' changed since it was trusted (definition, environment)",
    );
  });

  it("encodes a definition once per object", () => {
    const definition = { b: 1, a: [2] };
    const first = encodedDefinition(definition);
    expect(first.json).toBe('{"a":[2],"b":1}');
    expect(encodedDefinition(definition)).toBe(first);
    expect(first.digest).toBe(sha256Hex(first.json));
  });
});
