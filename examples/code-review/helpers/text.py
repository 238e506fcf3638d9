"""Text helpers, imported as a namespace package (no __init__.py)."""


def indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())
