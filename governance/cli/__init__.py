"""The `mm2gov` command line. Thin: parse, call the library, print what `governance.render` makes of the
result, map errors to exit codes. One module per command group; importing them registers their commands."""

from governance.cli import (  # noqa: F401 -- each registers its commands on `cli`
    admission,
    audit,
    credentials,
    deploy,
    doctor,
    importing,
    operate,
    policy,
    stack,
)
from governance.cli.root import _desired_state, cli, main

__all__ = ["_desired_state", "cli", "main"]
