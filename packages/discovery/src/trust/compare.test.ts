import { describe, expect, it } from "vitest";
import { sha256Hex } from "../digest";
import { compareTrust, environmentFingerprint } from "./compare";
import { TrustRecordSchema } from "./record";
import type { EnvironmentInfo } from "./schema";

const record = TrustRecordSchema.parse({
  path: "/w/echo.py",
  workflow_id: "echo",
  layout: "file",
  source_digest: sha256Hex("source"),
  definition_digest: sha256Hex("definition"),
  environment_fingerprint: sha256Hex("environment"),
  title: "Echo",
});
const same = {
  source_digest: record.source_digest,
  definition_digest: record.definition_digest,
  environment_fingerprint: record.environment_fingerprint,
};

describe("compareTrust", () => {
  it("finds nothing changed when all three match", () => {
    expect(compareTrust(record, same)).toEqual([]);
  });

  it.each([
    ["source", { source_digest: sha256Hex("x") }],
    ["definition", { definition_digest: sha256Hex("x") }],
    ["environment", { environment_fingerprint: sha256Hex("x") }],
  ])("names a changed %s", (part, change) => {
    expect(compareTrust(record, { ...same, ...change })).toEqual([part]);
  });

  it("names every changed part in a fixed order", () => {
    const other = sha256Hex("x");
    expect(
      compareTrust(record, {
        source_digest: other,
        definition_digest: other,
        environment_fingerprint: other,
      }),
    ).toEqual(["source", "definition", "environment"]);
  });
});

describe("environmentFingerprint", () => {
  const info: EnvironmentInfo = {
    interpreter: null,
    interpreter_path: "/usr/bin/python3.12",
    implementation: "cpython",
    python_version: "3.12.4",
    platform: "linux",
    machine: "x86_64",
    libc: "glibc 2.39",
    sdk_digest: sha256Hex("sdk"),
  };

  it("is stable and changes with each covered field", () => {
    const base = environmentFingerprint(info);
    expect(environmentFingerprint({ ...info })).toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const changes: Partial<EnvironmentInfo>[] = [
      { interpreter: "../../.venv" },
      { interpreter_path: "/opt/python/bin/python3.12" },
      { implementation: "pypy" },
      { python_version: "3.12.5" },
      { platform: "darwin" },
      { machine: "arm64" },
      { libc: null },
      { sdk_digest: sha256Hex("sdk 2") },
    ];
    for (const change of changes) expect(environmentFingerprint({ ...info, ...change })).not.toBe(base);
  });

  it("rejects a shape that is not clarification 24's", () => {
    expect(() => environmentFingerprint({ ...info, machine: 64 } as unknown as EnvironmentInfo)).toThrow();
  });
});
