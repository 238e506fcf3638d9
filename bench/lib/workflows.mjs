// Writes the benchmark's workflow files: the engine workloads and a project of 1,000 workflows.
// Everything goes under a temporary folder given by the caller, never into the repository.
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

/** The large value: four ASCII strings of this many characters, 15.94 MiB in all. */
export const VALUE_PART = 4_177_920;
export const VALUE_BYTES = 4 * VALUE_PART;

const HEADER = `from chrys.workflows import WorkflowBuilder, WorkflowValue


def echo(value: WorkflowValue) -> WorkflowValue:
    return value

`;

/** A chain of `n` trivial Python nodes, each returning its input. */
export function chainSource(n) {
  return `"""Benchmark workload: a chain of ${n} trivial Python nodes, each returning its input."""

${HEADER}
wf = WorkflowBuilder("chain of ${n}")
nodes = [wf.python("n%d" % i, echo) for i in range(${n})]
${n > 1 ? "wf.chain(*nodes)\n" : ""}wf.start(nodes[0])
wf.output(nodes[-1])
workflow = wf.build()
`;
}

/** One source node, `n` trivial branches, and a join of all branches into one sink (default merge). */
export function fanoutSource(n) {
  return `"""Benchmark workload: a fan-out of ${n} trivial Python nodes joined into one node."""

${HEADER}
wf = WorkflowBuilder("fan-out of ${n}")
src = wf.python("src", echo)
branches = [wf.python("b%d" % i, echo) for i in range(${n})]
for branch in branches:
    wf.edge(src, branch)
sink = wf.python("sink", echo)
wf.join(branches, sink)
wf.start(src)
wf.output(sink)
workflow = wf.build()
`;
}

/** A loop of exactly `n` iterations of a two-node body (the stop condition is never met; "continue"). */
export function loopSource(n) {
  return `"""Benchmark workload: a loop of ${n} iterations of a two-node body of trivial Python nodes."""

from chrys.workflows import BuilderScope, WorkflowBuilder, WorkflowValue


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


def body(scope: BuilderScope):
    first = scope.python("a", echo)
    second = scope.python("b", echo)
    scope.edge(first, second)
    return first, second


def never(value: WorkflowValue) -> bool:
    return False


wf = WorkflowBuilder("loop of ${n}")
start = wf.python("start", echo)
repeat = wf.loop("repeat", body, until=never, max_iterations=${n}, on_exhausted="continue")
wf.edge(start, repeat)
wf.start(start)
wf.output(repeat)
workflow = wf.build()
`;
}

/**
 * A chain of `n` nodes whose first node makes the value: with input `big`, four strings of VALUE_PART
 * characters (the largest round size whose message stays under the 16 MiB limit); with `small`, four short
 * ones. The other nodes return their input, so the large value crosses every edge and comes back as output.
 */
export function valueSource(n) {
  return `"""Benchmark workload: a ${Math.round(VALUE_BYTES / 1024)} KiB value through a chain of ${n} nodes."""

${HEADER}
PART = ${VALUE_PART}


def make(value: WorkflowValue) -> WorkflowValue:
    size = PART if value.text == "big" else 8
    return WorkflowValue(text="", data=["x" * size for _ in range(4)])


wf = WorkflowBuilder("large value through ${n} nodes")
nodes = [wf.python("n0", make)] + [wf.python("n%d" % i, echo) for i in range(1, ${n})]
wf.chain(*nodes)
wf.start(nodes[0])
wf.output(nodes[-1])
workflow = wf.build()
`;
}

/** A small workflow for the project of many workflows; `title` is its WorkflowBuilder title. */
function smallSource(title) {
  return `${HEADER}
wf = WorkflowBuilder(${JSON.stringify(title)})
node = wf.python("echo", echo)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;
}

/** Writes `<project>/.chrys/workflows/<id>.py` for each `[id, source]` and returns the project folder. */
export function writeProject(project, workflows) {
  const dir = join(project, ".chrys", "workflows");
  mkdirSync(dir, { recursive: true });
  for (const [id, source] of workflows) writeFileSync(join(dir, `${id}.py`), source);
  return project;
}

/**
 * A project of `count` workflows: nine in ten single files, one in ten workflow folders (entry file plus a
 * helper module), so that discovery meets both layouts. Returns `{ project, first }`, `first` being the
 * relative path of one of its workflow files.
 */
export function writeManyProject(project, count) {
  const dir = join(project, ".chrys", "workflows");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const id = `wf-${String(i).padStart(4, "0")}`;
    if (i % 10 === 9) {
      mkdirSync(join(dir, id), { recursive: true });
      writeFileSync(join(dir, id, `${id}.py`), `import steps  # noqa: F401\n${smallSource(`Workflow ${i}`)}`);
      writeFileSync(join(dir, id, "steps.py"), "VALUE = 1\n");
    } else {
      writeFileSync(join(dir, `${id}.py`), smallSource(`Workflow ${i}`));
    }
  }
  return { project, first: join(".chrys", "workflows", "wf-0000.py") };
}

/** A project whose `.chrys/workflows/` holds a copy of every shipped example. Returns the example names. */
export function writeExamplesProject(project, examplesDir) {
  const dir = join(project, ".chrys", "workflows");
  mkdirSync(dir, { recursive: true });
  const names = readdirSync(examplesDir, { withFileTypes: true })
    .filter((e) => !e.name.startsWith(".") && !e.name.startsWith("_"))
    .filter((e) => e.isDirectory() || e.name.endsWith(".py"))
    .map((e) => e.name);
  for (const name of names) cpSync(join(examplesDir, name), join(dir, name), { recursive: true });
  return names;
}

/**
 * A project whose `.chrys/workflows/` holds a copy of the one workflow file `file` (such as examples/echo.py).
 * Returns its workflow ID (the file name without `.py`).
 */
export function writeCopyProject(project, file) {
  const dir = join(project, ".chrys", "workflows");
  mkdirSync(dir, { recursive: true });
  cpSync(file, join(dir, basename(file)));
  return basename(file).replace(/\.py$/, "");
}
