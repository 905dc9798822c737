"""The `mm2gov` root command, the options several commands share, and the entry point: every known failure
one line on stderr and a contract exit code. The commands live beside it, one module per group."""

from __future__ import annotations

import gc
import logging
import sys
from pathlib import Path

import click

from governance import __version__
from governance.errors import EXIT_RUNTIME, EXIT_USAGE, EXIT_VIOLATIONS, MM2GovError

log = logging.getLogger("mm2gov")
LOG_LEVELS = ("debug", "info", "warning", "error")
# A short-lived process that builds large, acyclic records (scopes, ACL sets): collecting the young
# generation every 700 allocations (CPython's default) cost a third of `plan` on 1,000 tenants.
GC_THRESHOLDS = (50_000, 20, 20)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="mm2gov")
@click.option("--log-level", type=click.Choice(LOG_LEVELS), default="info", show_default=True,
              help="Verbosity of the log on stderr (stdout carries only results).")
def cli(log_level: str) -> None:
    """mm2gov keeps lines of business (tenants) apart when Kafka data is replicated
    between clusters with MirrorMaker 2.

    One tenancy model in Git (clusters.yaml, tenants/*.yaml, Rego policies) is
    checked by OPA and compiled into isolated MM2 flows, least-privilege ACLs,
    users, Strimzi resources and secrets; the same policies run in the pull
    request, at admission and in the audit.

    Exit codes: 0 ok, 1 violations or findings, 2 bad usage or invalid config,
    3 runtime failure (cluster, OPA or a tool unreachable or missing).
    """
    from governance.secrets.scrub import ScrubFilter

    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for handler in logging.getLogger().handlers:  # every record is scrubbed of known secret values
        handler.addFilter(ScrubFilter())
    if log_level != "debug":  # connection retries are reported once, by the command's own error
        logging.getLogger("urllib3").setLevel(logging.ERROR)
        logging.getLogger("kafka").setLevel(logging.WARNING)  # kafka-python (client quotas, kafka/quotas.py)


# -- options several commands share ---------------------------------------------------------

DEFAULT_RUN_DIR = "~/.cache/mm2gov/run/default"
run_dir_option = click.option(
    "--run-dir", default=DEFAULT_RUN_DIR, show_default=True,
    help="Where the stack keeps its state, logs, certificates and data.",
    callback=lambda _ctx, _param, value: Path(value).expanduser(),
)
format_option = click.option("--format", "output_format", type=click.Choice(["text", "json"]),
                             default="text", show_default=True, help="Output format on stdout.")
SEVERITY_CHOICE = click.Choice(["info", "low", "medium", "high", "critical"])
opa_url_option = click.option("--opa-url", default=None, metavar="URL", envvar="MM2GOV_OPA_URL", show_envvar=True,
                              help="Use this OPA server instead of starting one (policies are uploaded to it, and "
                                   "the repo's organisation rules are removed again when the command ends).")
fail_on_option = click.option("--fail-on", default="high", show_default=True, type=SEVERITY_CHOICE,
                              help="Exit 1 when a violation has this severity or higher.")
repo_argument = click.argument("repo", type=click.Path(path_type=Path))

secrets_path_option = click.option(
    "--secrets-path", default="/etc/mm2gov/secrets", show_default=True,
    help="Where MM2 finds mounted secrets at run time (<path>/<secret>/<key>); generated files reference it.")


secrets_dir_option = click.option(
    "--secrets-dir", envvar="MM2GOV_SECRETS_DIR", default="/etc/mm2gov/secrets", show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Secret store as mounted Secrets: <dir>/<secret>/<key> (admin credentials, CAs, SCRAM passwords).")


def _decided(repo: Path, opa_url: str | None):
    """Load and decide: the inventory and the policy decision every command acts on. A repo with high or
    critical violations gets one answer from every command that acts on it (generate, apply, drift, audit,
    failover, probe): the violations and exit 1, nothing done."""
    from governance.policy.decide import decide_repo
    from governance.render import violations as render

    inventory, decision = decide_repo(repo, opa_url)
    blocking = decision.at_or_above("high")
    if blocking:
        click.echo(render.text(blocking), err=True, nl=False)
        click.echo("error: refusing to act on a repo with high or critical violations", err=True)
        sys.exit(EXIT_VIOLATIONS)
    return inventory, decision


def _desired_state(repo: Path, opa_url: str | None, secrets_path: str):
    """Load, decide and compile; a repo with high or critical violations is refused (exit 1)."""
    from governance.compile.desired import compile_desired

    inventory, decision = _decided(repo, opa_url)
    return inventory, compile_desired(inventory, decision, secrets_path)


# -- entry point -----------------------------------------------------------------------------

def main() -> None:
    """Run the CLI; every known failure is one line on stderr and a contract exit code."""
    gc.set_threshold(*GC_THRESHOLDS)
    from governance.secrets.scrub import scrub

    try:
        code = cli.main(prog_name="mm2gov", standalone_mode=False)
    except click.exceptions.ClickException as exc:
        exc.message = scrub(exc.message)
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except MM2GovError as exc:
        click.echo(f"error: {scrub(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        log.debug("internal error", exc_info=True)
        click.echo(f"error: internal error ({type(exc).__name__}); run with --log-level debug for details",
                   err=True)
        sys.exit(EXIT_RUNTIME)
    sys.exit(code if isinstance(code, int) else 0)
