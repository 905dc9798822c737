"""`mm2gov devstack` (the local stack for contributors) and `mm2gov demo`."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from governance.cli.root import (
    cli,
    format_option,
    run_dir_option,
)
from governance.errors import EXIT_RUNTIME

log = logging.getLogger("mm2gov")


@cli.group()
def devstack() -> None:
    """The real local stack on 127.0.0.1: two Kafka 4 clusters (KRaft, SASL_SSL,
    SCRAM-SHA-512, StandardAuthorizer), OPA, etcd + kube-apiserver with Strimzi's
    CRDs, and MirrorMaker 2 per flow when asked. Components come from `make setup`."""


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
    from governance.devstack.stack import Stack, StackSpec

    spec = StackSpec(run_dir=run_dir, components=tuple(c.strip() for c in only.split(",") if c.strip()),
                     ports=_parse_ports(ports))
    log.info("starting %s in %s", ", ".join(spec.components), run_dir)
    stack = Stack(spec).up()
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
    from governance.devstack.stack import Stack

    stopped = Stack.attach(run_dir).down()
    click.echo(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


@devstack.command("status")
@run_dir_option
@format_option
def devstack_status(run_dir: Path, output_format: str) -> None:
    """Show what runs where and probe each component. Exit 3 if one is not ready."""
    from governance.devstack.stack import Stack

    stack = Stack.attach(run_dir)
    health = stack.health()
    _echo_stack(stack.describe(), health, output_format)
    if any(state != "ready" for state in health.values()):
        sys.exit(EXIT_RUNTIME)


def _echo_stack(description: dict, health: dict[str, str], output_format: str) -> None:
    from governance.render import stack as render_stack

    render = render_stack.as_json if output_format == "json" else render_stack.text
    click.echo(render(description, health), nl=False)






@cli.command()
@click.option("--run-dir", default=None, help="Keep the demo stack's files here (default: a temp dir).")
@click.option("--keep", is_flag=True, help="Leave the stack running at the end (stop it with devstack down).")
def demo(run_dir: str | None, keep: bool) -> None:
    """The whole story on a real local stack."""
    from governance.demo import run_demo

    run_demo(Path(run_dir).expanduser() if run_dir else None, keep=keep)
