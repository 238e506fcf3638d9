import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakePyenv, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { knownLaunch, launchFor } from "../src/index";

/** The real interpreter the stand-in versions link to. */
const PYTHON = execFileSync("python3", ["-c", "import sys; print(sys.executable)"]).toString().trim();

function setup(extraExports = "") {
  const pyenv = fakePyenv(PYTHON, extraExports);
  const cwd = tmpDir();
  const env = { ...process.env, PYENV_VERSION: undefined, PYENV_DIR: undefined, PWD: cwd };
  const cacheDir = join(tmpDir("icode-home-"), "cache", "interpreters");
  return { ...pyenv, cwd, env, cacheDir, launch: () => launchFor(pyenv.shim, { env, cwd, cacheDir }) };
}

/** A pyenv shim probed once: its cache file and the entry the probe wrote there. */
async function probed() {
  const s = setup();
  await s.launch();
  const [entry] = readdirSync(s.cacheDir);
  const file = join(s.cacheDir, entry!);
  return { s, file, good: JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown> };
}

/** Texts of cache files that hold no usable entry: not JSON, not an object, a field of the wrong type. */
function brokenEntries(good: Record<string, unknown>): string[] {
  return [
    "",
    "not json",
    "null",
    "[]",
    '"text"',
    "7",
    JSON.stringify({ ...good, version: 2 }),
    JSON.stringify({ ...good, version: "1" }),
    JSON.stringify({ ...good, shim: null }),
    JSON.stringify({ ...good, executable: 7 }),
    JSON.stringify({ ...good, envChanges: null }),
    JSON.stringify({ ...good, envChanges: ["PATH"] }),
    JSON.stringify({ ...good, envChanges: { PATH: 1 } }),
    JSON.stringify({ ...good, stamps: null }),
    JSON.stringify({ ...good, stamps: ["a"] }),
    JSON.stringify({ ...good, stamps: { "/": 1 } }),
    JSON.stringify({ ...good, shim: "/somewhere/else/python3" }),
  ];
}

describe("starting a pyenv shim", () => {
  it("runs the shim once, then starts the binary it chose with the environment it set", async () => {
    const s = setup();
    const first = await s.launch();
    expect(first.command).toBe(join(s.root, "versions", "3.0.1", "bin", "python3"));
    expect(first.env.PATH?.split(":")[0]).toBe(join(s.root, "versions", "3.0.1", "bin"));
    expect(first.env.PYENV_VERSION).toBe("3.0.1");
    expect(first.env.PYENV_DIR).toBe(s.cwd);
    expect(s.runs()).toBe(1);

    const second = await s.launch();
    expect(second).toEqual(first);
    expect(s.runs()).toBe(1);
  });

  it("asks the shim again when a .python-version file, the global version or PYENV_VERSION changes", async () => {
    const s = setup();
    expect((await s.launch()).command).toContain("3.0.1");

    writeFileSync(join(s.cwd, ".python-version"), "3.0.2\n"); // pyenv local
    expect((await s.launch()).command).toContain("3.0.2");
    expect(s.runs()).toBe(2);
    expect((await s.launch()).command).toContain("3.0.2");
    expect(s.runs()).toBe(2);

    writeFileSync(join(s.cwd, ".python-version"), "3.0.1\n");
    expect((await s.launch()).command).toContain("3.0.1");
    expect(s.runs()).toBe(3);

    const other = setup();
    expect((await other.launch()).command).toContain("3.0.1");
    writeFileSync(join(other.root, "version"), "3.0.2\n"); // pyenv global
    expect((await other.launch()).command).toContain("3.0.2");
    expect(other.runs()).toBe(2);

    const pinned = await launchFor(other.shim, {
      env: { ...other.env, PYENV_VERSION: "3.0.1" }, // pyenv shell
      cwd: other.cwd,
      cacheDir: other.cacheDir,
    });
    expect(pinned.command).toContain("3.0.1");
    expect(other.runs()).toBe(3);
  });

  it("probes with the caller's environment only, not this process's", async () => {
    // A variable of this process that the caller left out would look like one the shim set (pyenv sets
    // no such variable), and the shim would then never be bypassed.
    const s = setup(); // s.env is a copy of this process's environment made before the variable is set
    process.env.ICODE_LAUNCH_TEST_ONLY_HERE = "1";
    try {
      const launch = await s.launch();
      expect(launch.command).toBe(join(s.root, "versions", "3.0.1", "bin", "python3"));
      expect(launch.env.ICODE_LAUNCH_TEST_ONLY_HERE).toBeUndefined();
    } finally {
      delete process.env.ICODE_LAUNCH_TEST_ONLY_HERE;
    }
  });

  it("notices a .python-version file created in a parent folder", async () => {
    const s = setup();
    const inner = join(s.cwd, "a", "b");
    mkdirSync(inner, { recursive: true });
    const env = { ...s.env, PWD: inner };
    expect((await launchFor(s.shim, { env, cwd: inner, cacheDir: s.cacheDir })).command).toContain("3.0.1");
    writeFileSync(join(s.cwd, "a", ".python-version"), "3.0.2\n");
    expect((await launchFor(s.shim, { env, cwd: inner, cacheDir: s.cacheDir })).command).toContain("3.0.2");
    expect(s.runs()).toBe(2);
  });

  it("keeps going through a shim that sets variables of its own, and through other wrappers", async () => {
    const s = setup('export SECRET_TOKEN="from the shim"');
    expect(await s.launch()).toEqual({ command: s.shim, env: s.env });
    expect(await s.launch()).toEqual({ command: s.shim, env: s.env });
    expect(s.runs()).toBe(2); // probed each time, never cached
    expect(existsSync(s.cacheDir) ? readdirSync(s.cacheDir) : []).toEqual([]);

    const dir = tmpDir();
    writeTree(dir, { python3: `#!/bin/sh\necho run >> "${dir}/runs"\nexec "${PYTHON}" "$@"\n` });
    chmodSync(join(dir, "python3"), 0o755);
    const wrapper = join(dir, "python3");
    const env = { ...process.env };
    expect(await launchFor(wrapper, { env, cwd: dir, cacheDir: s.cacheDir })).toEqual({
      command: wrapper,
      env,
    });
    expect(existsSync(join(dir, "runs"))).toBe(false);
    expect(await launchFor(PYTHON, { env, cwd: dir, cacheDir: s.cacheDir })).toEqual({
      command: PYTHON,
      env,
    });
  });

  it("ignores a cache entry other users can change", async () => {
    const s = setup();
    await s.launch();
    const [entry] = readdirSync(s.cacheDir);
    chmodSync(join(s.cacheDir, entry!), 0o666);
    await s.launch();
    expect(s.runs()).toBe(2);
  });

  it("ignores a cache entry that is not one, and replaces it", async () => {
    const { s, file, good } = await probed();
    const broken = brokenEntries(good);
    for (const [i, text] of broken.entries()) {
      writeFileSync(file, text, { mode: 0o600 });
      expect(await s.launch()).toEqual({ command: good.executable, env: expect.any(Object) });
      expect(s.runs()).toBe(i + 2); // asked the shim again
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(good);
    }
    await s.launch();
    expect(s.runs()).toBe(broken.length + 1); // the entry written back is used
  });
});

describe("knownLaunch: the launch when no probe is needed", () => {
  it("is the command itself for an interpreter that is not a pyenv shim", () => {
    const cacheDir = join(tmpDir("icode-home-"), "cache", "interpreters");
    const env = { ...process.env };
    expect(knownLaunch(PYTHON, { env, cwd: tmpDir(), cacheDir })).toEqual({ command: PYTHON, env });
    const missing = join(tmpDir(), "no-such-python");
    expect(knownLaunch(missing, { env, cwd: tmpDir(), cacheDir })).toEqual({ command: missing, env });
    expect(existsSync(cacheDir)).toBe(false);
  });

  it("is null for a shim not probed yet, without running it", () => {
    const s = setup();
    expect(knownLaunch(s.shim, { env: s.env, cwd: s.cwd, cacheDir: s.cacheDir })).toBeNull();
    expect(s.runs()).toBe(0);
  });

  it("is what launchFor found once the shim was probed, without running it again", async () => {
    const s = setup();
    const probed = await s.launch();
    expect(probed.command).toBe(join(s.root, "versions", "3.0.1", "bin", "python3"));
    expect(knownLaunch(s.shim, { env: s.env, cwd: s.cwd, cacheDir: s.cacheDir })).toEqual(probed);
    expect(s.runs()).toBe(1);
    // A decision that no longer holds (pyenv local) needs a probe again.
    writeFileSync(join(s.cwd, ".python-version"), "3.0.2\n");
    expect(knownLaunch(s.shim, { env: s.env, cwd: s.cwd, cacheDir: s.cacheDir })).toBeNull();
    // Another working folder is another entry.
    expect(knownLaunch(s.shim, { env: s.env, cwd: tmpDir(), cacheDir: s.cacheDir })).toBeNull();
    expect(s.runs()).toBe(1);
  });

  it("is null, not a throw, for a cache entry that is corrupt or of the wrong types", async () => {
    const { s, file, good } = await probed();
    for (const text of brokenEntries(good)) {
      writeFileSync(file, text, { mode: 0o600 });
      expect([text, knownLaunch(s.shim, { env: s.env, cwd: s.cwd, cacheDir: s.cacheDir })]).toEqual([
        text,
        null,
      ]);
    }
    expect(s.runs()).toBe(1);
    writeFileSync(file, JSON.stringify(good), { mode: 0o600 });
    expect(knownLaunch(s.shim, { env: s.env, cwd: s.cwd, cacheDir: s.cacheDir })?.command).toBe(
      good.executable,
    );
  });
});
