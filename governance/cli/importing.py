"""`mm2gov import`: a legacy MirrorMaker 2 file as a tenant file."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from governance.cli.root import (
    cli,
)

log = logging.getLogger("mm2gov")


@cli.command("import")
@click.argument("legacy", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--tenant", default="imported", show_default=True, help="Name of the tenant the flows belong to.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write the repo here (clusters.yaml, tenants/<tenant>.yaml) instead of printing it.")
def import_legacy(legacy: Path, tenant: str, out: Path | None) -> None:
    """Print the governance repo an existing MM2 properties file corresponds to, with a warning
    per unsafe setting (inline secrets, blacklist names, ACL sync, .* patterns). Secrets are
    never echoed."""
    from governance.importer import import_properties, read_properties_file
    from governance.render import importer as render_import

    try:
        imported = import_properties(read_properties_file(legacy), tenant)
    except ValueError as exc:
        raise click.UsageError(f"{legacy}: {exc}") from None
    for warning in imported.warnings:
        click.echo(f"warning: {warning}", err=True)
    files = render_import.repo_files(imported, tenant)
    if out is None:
        click.echo(render_import.text(files), nl=False)
        return
    (out / "tenants").mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        (out / relative).write_text(content)
    click.echo(f"wrote {' and '.join(str(out / relative) for relative in files)}")
