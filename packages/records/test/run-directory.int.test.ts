import { spawn } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInit, scriptedEvents, sessionInit } from "./conformance/fixtures";
import { append, finish, removeDir, tempDir } from "./helpers";
import {
  canonicalJson,
  createRun,
  createSession,
  FILES,
  loadSession,
  readEventLog,
  readRunDir,
  recoverOrphans,
  runDir,
  sessionDir,
  writeFileAtomic,
  writeFileAtomicAsync,
} from "./internals";

let root: string;
let home: string;
beforeEach(() => {
  root = tempDir();
  home = join(root, "home");
});
afterEach(() => removeDir(root));

function isCanonicalFile(path: string): boolean {
  const text = readFileSync(path, "utf8");
  return text === canonicalJson(JSON.parse(text));
}

describe("run directory layout", () => {
  it("writes every JSON file as canonical JSON and every event as one canonical line", () => {
    const session = createSession(home, sessionInit(root, { settings: { model: "m", zeta: 1, alpha: [2] } }));
    const recorder = createRun(home, session.session_id, runInit());
    for (const event of scriptedEvents(recorder.runId)) append(recorder, event);
    recorder.writeNodeDiagnostics({
      node_id: "a",
      activation_id: "a@iter#1",
      attempt: 1,
      phases: [{ phase: "node", stdout: { text: "é\n", truncated: false } }],
    });
    finish(recorder, { outputs: [], output: { native: { text: "x", dropped_bytes: 3 } } });
    const dir = runDir(sessionDir(home, session.session_id), recorder.runId);
    const sessionFile = join(sessionDir(home, session.session_id), FILES.session);
    expect(isCanonicalFile(sessionFile)).toBe(true);
    expect(readFileSync(sessionFile, "utf8")).toMatch(/^\{"created_at":/);
    for (const name of [
      FILES.header,
      FILES.definition,
      FILES.environment,
      FILES.input,
      FILES.outputs,
      FILES.output,
    ]) {
      expect(isCanonicalFile(join(dir, name)), name).toBe(true);
    }
    const [diagnostics] = readdirSync(join(dir, FILES.nodes));
    expect(diagnostics).toMatch(/^a@iter_1\.1\.diagnostics\.[0-9a-f]{8}\.json$/);
    expect(isCanonicalFile(join(dir, FILES.nodes, diagnostics!))).toBe(true);
    const lines = readFileSync(join(dir, FILES.events), "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.length - 1).toBe(13);
    for (const line of lines.slice(0, -1)) expect(line).toBe(canonicalJson(JSON.parse(line)));
    // No temporary files are left behind anywhere.
    const all = readdirSync(root, { recursive: true }).map(String);
    expect(all.filter((p) => p.endsWith(".tmp"))).toEqual([]);
  });

  it("writes the definition's canonical JSON as given when the caller already encoded it", () => {
    const session = createSession(home, sessionInit(root));
    const init = runInit();
    const definitionJson = canonicalJson(init.definition);
    const recorder = createRun(home, session.session_id, { ...init, definitionJson });
    recorder.close();
    const dir = runDir(sessionDir(home, session.session_id), recorder.runId);
    expect(readFileSync(join(dir, FILES.definition), "utf8")).toBe(definitionJson);
    expect(readRunDir(dir).definition).toEqual(init.definition);
  });

  it("snapshots a folder workflow without dot-names and __pycache__, and a single file by name", () => {
    const wf = join(root, "wf");
    for (const [rel, text] of Object.entries({
      "main.py": "x = 1\n",
      "lib/helper.py": "y = 2\n",
      "lib/__pycache__/helper.cpython-311.pyc": "bytecode",
      "__pycache__/main.cpython-311.pyc": "bytecode",
      ".env": "SECRET=1",
      ".git/config": "[core]",
      "lib/.hidden.py": "no",
      "data/prompt.txt": "hello",
    })) {
      mkdirSync(join(wf, rel, ".."), { recursive: true });
      writeFileSync(join(wf, rel), text);
    }
    const session = createSession(home, sessionInit(root));
    const folderRun = createRun(home, session.session_id, runInit({ source: { path: wf } }));
    folderRun.close();
    const source = join(folderRun.dir, FILES.source);
    expect(readdirSync(source, { recursive: true }).map(String).sort()).toEqual([
      "data",
      "data/prompt.txt",
      "lib",
      "lib/helper.py",
      "main.py",
    ]);
    expect(readFileSync(join(source, "lib/helper.py"), "utf8")).toBe("y = 2\n");
    const fileRun = createRun(home, session.session_id, runInit({ source: { path: join(wf, "main.py") } }));
    fileRun.close();
    expect(readdirSync(join(fileRun.dir, FILES.source))).toEqual(["main.py"]);
    expect(loadSession(home, session.session_id).runs).toEqual([folderRun.runId, fileRun.runId]);
  });

  it("reads a log whose last line was torn by a crash, warns, and appends after it on a fresh line", () => {
    const session = createSession(home, sessionInit(root));
    const recorder = createRun(home, session.session_id, runInit());
    const events = scriptedEvents(recorder.runId, { end: false });
    for (const event of events.slice(0, 3)) append(recorder, event);
    recorder.close();
    const log = join(recorder.dir, FILES.events);
    // A crash in the middle of writing the fourth line.
    appendFileSync(log, canonicalJson(events[3]).slice(0, 25));
    const torn = readEventLog(log);
    expect(torn.events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(torn.warnings).toHaveLength(1);
    expect(torn.warnings[0]?.line).toBe(4);
    expect(torn.warnings[0]?.message).toMatch(/last line is incomplete/);
    // Recovery appends its end event; the torn fragment stays isolated on its own line.
    expect(readRunDir(recorder.dir).end).toBeNull();
    expect(recoverOrphans(sessionDir(home, session.session_id), () => false)).toHaveLength(1);
    const after = readEventLog(log);
    expect(after.events.map((e) => [e.seq, e.type])).toEqual([
      [0, "workflow_run_start"],
      [1, "node_started"],
      [2, "attempt_started"],
      [3, "workflow_run_end"],
    ]);
    expect(after.warnings.map((w) => w.line)).toEqual([4]);
    expect(after.warnings[0]?.message).toMatch(/not valid JSON/);
  });

  it("replaces files atomically: a concurrent reader only ever sees a whole old or new content", async () => {
    const file = join(root, "big.json");
    const a = JSON.stringify({ v: "a".repeat(1 << 20) });
    const b = JSON.stringify({ v: "b".repeat(1 << 20) });
    writeFileAtomic(file, a);
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `const fs = require("node:fs"); const seen = new Set(); const end = Date.now() + 400;
         while (Date.now() < end) { const t = fs.readFileSync(process.argv[1], "utf8"); seen.add(t.length + ":" + t[6] + t[t.length - 3]); }
         process.stdout.write(JSON.stringify([...seen]));`,
        file,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    reader.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const done = new Promise((resolve) => reader.on("close", resolve));
    const until = Date.now() + 450;
    let writes = 0;
    while (Date.now() < until) {
      writeFileAtomic(file, writes % 2 === 0 ? b : a);
      writes++;
      await new Promise((r) => setImmediate(r));
    }
    await done;
    const seen = JSON.parse(out) as string[];
    expect(writes).toBeGreaterThan(2);
    for (const entry of seen) expect([`${a.length}:aa`, `${b.length}:bb`]).toContain(entry);
    expect(statSync(file).size).toBe(a.length);
  });

  it("keeps the old file when the new one cannot be put in place, and leaves no temporary file", () => {
    const target = join(root, "target");
    mkdirSync(join(target, "child"), { recursive: true }); // a non-empty folder cannot be renamed over
    expect(() => writeFileAtomic(target, "{}")).toThrow(expect.objectContaining({ code: "storage_failed" }));
    expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(statSync(join(target, "child")).isDirectory()).toBe(true);
  });

  it("does the same off the main thread: writes, replaces, and refuses with storage_failed leaving no temporary file", async () => {
    const file = join(root, "async.json");
    await writeFileAtomicAsync(file, '{"v":1}');
    await writeFileAtomicAsync(file, '{"v":2}');
    expect(readFileSync(file, "utf8")).toBe('{"v":2}');
    const target = join(root, "busy");
    mkdirSync(join(target, "child"), { recursive: true });
    await expect(writeFileAtomicAsync(target, "{}")).rejects.toMatchObject({ code: "storage_failed" });
    expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("reports a transcript that cannot be stored: the write rejects and the next flush() rejects with storage_failed", async () => {
    const session = createSession(home, sessionInit(root));
    const recorder = createRun(home, session.session_id, runInit());
    const record = { node_id: "a", activation_id: "a", attempt: 1, transcript: { messages: [] } };
    // The transcript's name is taken by a non-empty folder: the rename fails, whatever the user's rights.
    const nodes = join(recorder.dir, FILES.nodes);
    await recorder.writeTranscript(record);
    const [name] = readdirSync(nodes).filter((n) => n.includes(".transcript."));
    const stored = join(nodes, name!);
    rmSync(stored);
    mkdirSync(join(stored, "child"), { recursive: true });
    const writing = recorder.writeTranscript(record);
    const flushed = recorder.flush();
    await expect(writing).rejects.toMatchObject({ code: "storage_failed" });
    await expect(flushed).rejects.toMatchObject({ code: "storage_failed" });
    await recorder.close();
  });
});
