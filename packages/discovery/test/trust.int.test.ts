import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleForNode } from "@icode/test-utils";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  canonicalJson,
  compareTrust,
  readTrust,
  readTrustTitles,
  sha256Hex,
  TRUST_RECORD_VERSION,
  type TrustRecordInput,
  trustDir,
  trustRecordPath,
  writeTrust,
} from "../src/index";
import { tempDir } from "./support/fs";

function input(entry: string, title = "Echo"): TrustRecordInput {
  return {
    path: entry,
    workflow_id: "echo",
    layout: "file",
    source_digest: sha256Hex("source"),
    definition_digest: sha256Hex("definition"),
    environment_fingerprint: sha256Hex("environment"),
    title,
  };
}

describe("the trust store", () => {
  it("saves one record per entry path, named by the SHA-256 of the absolute path, and reads it back", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    const saved = await writeTrust(home, input(entry));
    expect(saved).toMatchObject({ ...input(entry), version: TRUST_RECORD_VERSION });
    expect(Number.isNaN(Date.parse(saved.trusted_at))).toBe(false);
    const file = trustRecordPath(home, entry);
    expect(file).toBe(path.join(home, "trust", `${sha256Hex(entry)}.json`));
    expect(readFileSync(file, "utf8")).toBe(`${canonicalJson(saved)}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(trustDir(home)).mode & 0o777).toBe(0o700);
    expect(await readTrust(home, entry)).toEqual(saved);
    expect(readdirSync(trustDir(home))).toEqual([path.basename(file)]);
  });

  it("keys by the absolute path: a relative path resolves, another path has no record", async () => {
    const home = tempDir();
    const dir = tempDir();
    await writeTrust(home, input(path.join(dir, "echo.py")));
    expect(await readTrust(home, path.join(dir, "sub", "..", "echo.py"))).not.toBeNull();
    expect(await readTrust(home, path.join(dir, "other.py"))).toBeNull();
  });

  it("replaces the earlier record of the same path", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    await writeTrust(home, input(entry, "First"));
    await writeTrust(home, { ...input(entry, "Second"), source_digest: sha256Hex("changed") });
    expect(await readTrust(home, entry)).toMatchObject({
      title: "Second",
      source_digest: sha256Hex("changed"),
    });
    expect(readdirSync(trustDir(home))).toHaveLength(1);
  });

  it("reads no record from a missing store, a torn or invalid file, another path's record or a file others can change", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    expect(await readTrust(home, entry)).toBeNull();
    const saved = await writeTrust(home, input(entry));
    const file = trustRecordPath(home, entry);
    const json = canonicalJson(saved);
    writeFileSync(file, json.slice(0, json.length / 2));
    expect(await readTrust(home, entry)).toBeNull();
    writeFileSync(file, canonicalJson({ ...saved, source_digest: "not hex" }));
    expect(await readTrust(home, entry)).toBeNull();
    writeFileSync(file, canonicalJson({ ...saved, path: "/elsewhere/echo.py" }));
    expect(await readTrust(home, entry)).toBeNull();
    writeFileSync(file, json);
    expect(await readTrust(home, entry)).toEqual(saved);
    chmodSync(file, 0o666);
    expect(await readTrust(home, entry)).toBeNull();
  });

  it("gives the titles of the records that readTrust accepts, for many paths at once", async () => {
    const home = tempDir();
    const dir = tempDir();
    const [a, b, c, d] = ["a.py", "b.py", "c.py", "d.py"].map((name) => path.join(dir, name)) as [
      string,
      string,
      string,
      string,
    ];
    expect(await readTrustTitles(home, [a, b])).toEqual(new Map()); // no trust folder yet
    await writeTrust(home, input(a, "Alpha"));
    const bad = await writeTrust(home, input(b, "Beta"));
    writeFileSync(trustRecordPath(home, b), canonicalJson({ ...bad, definition_digest: "not hex" }));
    await writeTrust(home, input(c, "Gamma"));
    chmodSync(trustRecordPath(home, c), 0o666);
    const unnormalized = `${dir}/sub/../a.py`;
    const titles = await readTrustTitles(home, [a, b, c, d, unnormalized]);
    expect(titles).toEqual(
      new Map([
        [a, "Alpha"],
        [unnormalized, "Alpha"],
      ]),
    );
    for (const entry of [a, b, c, d]) {
      expect(titles.get(entry)).toBe((await readTrust(home, entry))?.title);
    }
  });

  it("reads a record written by a newer engine and keeps its unknown fields when it rewrites it", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    const newer = {
      ...input(entry),
      version: 2,
      trusted_at: "2031-01-01T00:00:00.000Z",
      approvals: [{ by: "ada" }],
      sandbox: "strict",
    };
    mkdirSync(trustDir(home), { mode: 0o700 });
    writeFileSync(trustRecordPath(home, entry), JSON.stringify(newer), { mode: 0o600 });
    const read = await readTrust(home, entry);
    expect(read).toEqual(newer);
    await writeTrust(home, { ...read!, title: "Renamed" });
    const raw = JSON.parse(readFileSync(trustRecordPath(home, entry), "utf8"));
    expect(raw).toEqual({ ...newer, title: "Renamed" });
  });

  it("throws trust_write_failed when the store cannot be written", async () => {
    const home = tempDir();
    writeFileSync(path.join(home, "trust"), "a file where the folder should be");
    await expect(writeTrust(home, input(path.join(home, "echo.py")))).rejects.toMatchObject({
      code: "trust_write_failed",
    });
  });

  it("removes temporary files that dead writers left behind, once they are old", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    await writeTrust(home, input(entry));
    const stale = path.join(trustDir(home), `.${sha256Hex("x")}.json.1.abc.tmp`);
    const fresh = path.join(trustDir(home), `.${sha256Hex("y")}.json.2.def.tmp`);
    writeFileSync(stale, "{");
    writeFileSync(fresh, "{");
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000);
    utimesSync(stale, hourAgo, hourAgo);
    await writeTrust(home, input(entry));
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  it("tells which parts changed since trust was confirmed", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    const saved = await writeTrust(home, input(entry));
    const current = {
      source_digest: sha256Hex("edited"),
      definition_digest: saved.definition_digest,
      environment_fingerprint: sha256Hex("python 3.13"),
    };
    expect(compareTrust((await readTrust(home, entry))!, current)).toEqual(["source", "environment"]);
  });
});

describe("the trust store under concurrency and crashes", () => {
  let writer: string;
  let bundleDir: string;
  beforeAll(async () => {
    bundleDir = mkdtempSync(path.join(os.tmpdir(), "icode-discovery-bundle-"));
    writer = await bundleForNode(
      fileURLToPath(new URL("support/trust-writer.ts", import.meta.url)),
      bundleDir,
    );
  });
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

  // A failed assertion must not leave writers running into the next test (or into removed folders).
  const started: Array<{ child: ChildProcess; exited: Promise<number | null> }> = [];
  afterEach(async () => {
    for (const { child, exited } of started.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    }
  });

  function startWriter(home: string, entry: string, tag: string, count: number, pad: number) {
    const child = spawn(process.execPath, [writer, home, entry, tag, String(count), String(pad)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`writer exited (${code}) before it was ready: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    started.push({ child, exited });
    return { child, ready, exited, stderr: () => stderr };
  }

  /** Reads the record file as it is on disk and checks that it is one whole record of a known writer. */
  function expectWhole(text: string, tags: string[], pad: number): { tag: string; n: number } {
    const record = JSON.parse(text);
    const match = /^([A-Z]):(\d+):(x*)$/.exec(record.title);
    expect(match).not.toBeNull();
    expect(tags).toContain(match![1]);
    expect(match![3]!.length).toBe(pad);
    expect(record.source_digest).toBe(sha256Hex(`source ${match![1]} ${match![2]}`));
    return { tag: match![1]!, n: Number(match![2]) };
  }

  async function readWhileRunning(
    file: string,
    running: () => boolean,
    tags: string[],
    pad: number,
  ): Promise<number> {
    let reads = 0;
    while (running()) {
      expectWhole(await readFile(file, "utf8"), tags, pad);
      reads++;
    }
    return reads;
  }

  it("never leaves a torn record when the writer is killed mid-write (SIGKILL)", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    const file = trustRecordPath(home, entry);
    const pad = 256 * 1024;
    for (const delay of [0, 7, 23]) {
      const w = startWriter(home, entry, "A", 0, pad);
      await w.ready;
      let alive = true;
      const reading = readWhileRunning(file, () => alive, ["A"], pad);
      await new Promise((resolve) => setTimeout(resolve, delay));
      w.child.kill("SIGKILL");
      expect(await w.exited).toBeNull();
      alive = false;
      await reading;
      expectWhole(readFileSync(file, "utf8"), ["A"], pad);
      expect(await readTrust(home, entry)).toMatchObject({ path: entry, workflow_id: "echo" });
    }
  });

  it("keeps one whole record when two processes trust the same workflow at once", async () => {
    const home = tempDir();
    const entry = path.join(tempDir(), "echo.py");
    const file = trustRecordPath(home, entry);
    const pad = 32 * 1024;
    const count = 80;
    const a = startWriter(home, entry, "A", count, pad);
    const b = startWriter(home, entry, "B", count, pad);
    await Promise.all([a.ready, b.ready]);
    let running = true;
    const done = Promise.all([a.exited, b.exited]).then((codes) => {
      running = false;
      return codes;
    });
    const reads = await readWhileRunning(file, () => running, ["A", "B"], pad);
    expect(await done).toEqual([0, 0]);
    expect(reads).toBeGreaterThan(0);
    const last = expectWhole(readFileSync(file, "utf8"), ["A", "B"], pad);
    expect(last.n).toBe(count - 1);
    expect(readdirSync(trustDir(home))).toEqual([path.basename(file)]);
  });
});
