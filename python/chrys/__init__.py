"""The ``chrys`` package: iCode's Python SDKs. Workflow authors import :mod:`chrys.workflows`."""
