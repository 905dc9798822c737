"""mm2gov's built-in data: the Rego library, the audit's checks and the Kubernetes templates.

They live at the top of the repo (`policies/`, `audits/`, `k8s/`) and are package data:
pyproject.toml maps those directories into the package as `governance._policies`,
`governance._audits` and `governance._k8s`, so a wheel carries its own copy (without the Rego
tests and the audit fixtures) and an editable install (`make`) reads the checkout's. Everything
here finds them with importlib.resources, never by a path relative to this file. An environment
variable replaces each one:

- `MM2GOV_POLICIES`: the built-in Rego library (a directory holding `mm2gov/`);
- `MM2GOV_AUDITS`: the audit's checks, declared (a directory holding `<check_id_lower>/metadata.yaml`);
- `MM2GOV_K8S`: the Kubernetes templates (a directory holding `tenant/rbac.yaml`).

(The audit report's templates are the audit package's own, beside its code: spark_audit/report/templates/.)

OPA and the readers need real files, so each directory is handed out as a path through
`importlib.resources.as_file`: the files themselves for an ordinary (unpacked) install.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
from importlib.resources import as_file, files
from pathlib import Path

POLICIES_ENV = "MM2GOV_POLICIES"
AUDITS_ENV = "MM2GOV_AUDITS"
K8S_ENV = "MM2GOV_K8S"

_kept = contextlib.ExitStack()  # paths handed out stay valid for the whole process
atexit.register(_kept.close)


@functools.cache
def _package_dir(package: str) -> Path:
    return Path(_kept.enter_context(as_file(files(package))))


def policies_dir() -> Path:
    """The built-in Rego library: `$MM2GOV_POLICIES`, else the package's copy of `policies/`."""
    return Path(os.environ.get(POLICIES_ENV) or _package_dir("governance._policies"))


def audits_dir() -> Path:
    """The audit's declared checks: `$MM2GOV_AUDITS`, else the package's copy of `audits/`."""
    return Path(os.environ.get(AUDITS_ENV) or _package_dir("governance._audits"))


def k8s_dir() -> Path:
    """The Kubernetes templates: `$MM2GOV_K8S`, else the package's copy of `k8s/`."""
    return Path(os.environ.get(K8S_ENV) or _package_dir("governance._k8s"))
