"""Errors that the CLI turns into one clear line and a contract exit code.

Exit codes (CONTRACT.md): 0 ok, 1 violations/findings, 2 bad usage or invalid
config, 3 runtime failure (cluster, OPA or another component unreachable).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3


class MM2GovError(Exception):
    """Base class: `str(err)` is the whole message shown to the user."""

    exit_code: int = EXIT_RUNTIME


class ConfigError(MM2GovError):
    """Invalid input: a file, line and key the user can fix."""

    exit_code = EXIT_USAGE


class RuntimeFailure(MM2GovError):
    """Something outside the input failed: a cluster, OPA, a missing tool."""

    exit_code = EXIT_RUNTIME
