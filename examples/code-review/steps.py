"""Node functions of the code-review workflow."""

from chrys.workflows import WorkflowValue

SUSPICIOUS = ("print(", "breakpoint(", "TODO", "FIXME", "console.log(")


def collect_stats(value: WorkflowValue) -> WorkflowValue:
    added = [line[1:] for line in value.text.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in value.text.splitlines() if line.startswith("-") and not line.startswith("---")]
    files = [line[6:] for line in value.text.splitlines() if line.startswith("+++ b/")]
    text = f"{len(files)} file(s), +{len(added)} -{len(removed)} lines"
    return WorkflowValue(text=text, data={"files": files, "added": added, "removed": len(removed)})


def check_diff(value: WorkflowValue) -> WorkflowValue:
    findings = []
    for number, line in enumerate(value.data["added"], start=1):
        for marker in SUSPICIOUS:
            if marker in line:
                findings.append(f"added line {number}: contains {marker!r}")
        if len(line) > 120:
            findings.append(f"added line {number}: {len(line)} characters long")
    text = "\n".join(findings) if findings else "no findings"
    return WorkflowValue(text=text, data=findings)
