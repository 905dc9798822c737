"""`mm2gov devstack` (the local stack for contributors) and `mm2gov demo`: thin commands over the checkout's
`devstack` package, which the wheel does not ship. From an installed mm2gov they answer in one line, exit 2.

The stack is loaded from the source tree this mm2gov runs from (an editable install, or `python -m
governance` in a clone), never imported by name: the product does not depend on it (`.importlinter`).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

import click

from governance.cli.root import (
    cli,
    format_option,
    run_dir_option,
)
from governance.errors import EXIT_RUNTIME, ConfigError

log = logging.getLogger("mm2gov")

CHECKOUT = Path(__file__).resolve().parents[2]  # the source tree, when mm2gov runs from one
NOT_INSTALLED = ("the dev stack is part of the source checkout, not of the installed mm2gov: run `mm2gov {command}` "
                 "from a clone of the mm2gov repository, after `make setup`")


def load_devstack(command: str) -> None:
    """Make the checkout's `devstack` package importable, or refuse (exit 2): an installed wheel has none,
    and an ImportError traceback would say nothing about where the stack lives."""
    if "devstack" in sys.modules:
        return
    package = CHECKOUT / "devstack"
    spec = None
    if (CHECKOUT / "pyproject.toml").is_file() and (package / "__init__.py").is_file():
        spec = importlib.util.spec_from_file_location("devstack", package / "__init__.py",
                                                      submodule_search_locations=[str(package)])
    if spec is None or spec.loader is None:
        raise ConfigError(NOT_INSTALLED.format(command=command))
    module = importlib.util.module_from_spec(spec)
    sys.modules["devstack"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["devstack"]
        raise


def _devstack(module: str) -> Any:
    """`devstack.<module>`, once `load_devstack` has found the package."""
    return importlib.import_module(f"devstack.{module}")


@cli.group()
def devstack() -> None:
    """The real local stack on 127.0.0.1: two Kafka 4 clusters (KRaft, SASL_SSL,
    SCRAM-SHA-512, StandardAuthorizer), OPA, etcd + kube-apiserver with Strimzi's
    CRDs, and MirrorMaker 2 per flow when asked. For contributors: it runs from a
    source checkout, whose `make setup` installs the components."""
    load_devstack("devstack")


@devstack.command("up")
@run_dir_option
@click.option("--only", default="kafka,opa,kube", show_default=True,
              help="Comma-separated components to start (kafka, opa, kube).")
@click.option("--mm2", "mm2_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Start a dedicated MirrorMaker 2 for this properties file (repeatable; flow id = file name).")
@click.option("--port", "ports", multiple=True, metavar="COMPONENT=PORT",
              help="Fix a port, e.g. kafka-source=19093 (repeatable). Others are chosen free.")
@format_option
def devstack_up(run_dir: Path, only: str, mm2_files: tuple[Path, ...], ports: tuple[str, ...],
                output_format: str) -> None:
    """Start the stack and wait until every component is really ready."""
    stack_module = _devstack("stack")
    components = tuple(c.strip() for c in only.split(",") if c.strip())
    spec = stack_module.StackSpec(run_dir=run_dir, components=components, ports=_parse_ports(ports))
    log.info("starting %s in %s", ", ".join(spec.components), run_dir)
    stack = stack_module.Stack(spec).up()
    try:
        for path in mm2_files:
            log.info("starting MirrorMaker 2 for %s", path)
            stack.start_mirrormaker(path.stem, path)
    except BaseException:
        stack.down()
        raise
    _echo_stack(stack.describe(), stack.health(), output_format)


def _parse_ports(values: tuple[str, ...]) -> dict[str, int]:
    ports = {}
    for value in values:
        name, _, number = value.partition("=")
        if not number.isdigit() or not 0 < int(number) < 65536:
            raise click.BadParameter(f"expected COMPONENT=PORT, got {value!r}", param_hint="--port")
        ports[name.strip()] = int(number)
    return ports


@devstack.command("down")
@run_dir_option
def devstack_down(run_dir: Path) -> None:
    """Stop every process of the stack (by PID) and keep its logs."""
    stopped = _devstack("stack").Stack.attach(run_dir).down()
    click.echo(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


@devstack.command("status")
@run_dir_option
@format_option
def devstack_status(run_dir: Path, output_format: str) -> None:
    """Show what runs where and probe each component. Exit 3 if one is not ready."""
    stack = _devstack("stack").Stack.attach(run_dir)
    health = stack.health()
    _echo_stack(stack.describe(), health, output_format)
    if any(state != "ready" for state in health.values()):
        sys.exit(EXIT_RUNTIME)


def _echo_stack(description: dict, health: dict[str, str], output_format: str) -> None:
    render_stack = _devstack("render")
    render = render_stack.as_json if output_format == "json" else render_stack.text
    click.echo(render(description, health), nl=False)


@cli.command()
@click.option("--run-dir", default=None, help="Keep the demo stack's files here (default: a temp dir).")
@click.option("--keep", is_flag=True, help="Leave the stack running at the end (stop it with devstack down).")
def demo(run_dir: str | None, keep: bool) -> None:
    """The whole story on a real local stack (from a source checkout, as `make demo`)."""
    load_devstack("demo")
    _devstack("demo").run_demo(Path(run_dir).expanduser() if run_dir else None, keep=keep)
