"""`mm2gov import`: the governance repo an MM2 properties file corresponds to, as YAML files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml

from governance.files import YAML_DUMPER

if TYPE_CHECKING:
    from governance.importer import Imported


def repo_files(imported: Imported, tenant: str) -> dict[str, str]:
    """Each file of the repo (path relative to the repo) and its YAML."""
    return {"clusters.yaml": yaml.dump(imported.clusters, Dumper=YAML_DUMPER, sort_keys=False),
            f"tenants/{tenant}.yaml": yaml.dump(imported.tenant, Dumper=YAML_DUMPER, sort_keys=False)}


def text(files: dict[str, str]) -> str:
    """The files on one stream, each under a `# <path>` comment, separated by `---`."""
    return "---\n".join(f"# {path}\n{content}" for path, content in files.items())
