"""mm2gov's built-in data: the Rego library and the Kubernetes templates.

They live at the top of the repo (`policies/`, `k8s/`) and are package data: pyproject.toml
maps those directories into the package as `governance._policies` and `governance._k8s`, so a
wheel carries its own copy and an editable install (`make`) reads the checkout's. Everything
here finds them with importlib.resources, never by a path relative to this file. An
environment variable replaces each one:

- `MM2GOV_POLICIES`: the built-in Rego library (a directory holding `mm2gov/`);
- `MM2GOV_K8S`: the Kubernetes templates (a directory holding `tenant/rbac.yaml`).

(The audit's check metadata and report templates are the audit package's own data, beside its
code: spark_audit/checks/<check>/metadata.yaml, spark_audit/report/templates/.)

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
K8S_ENV = "MM2GOV_K8S"

_kept = contextlib.ExitStack()  # paths handed out stay valid for the whole process
atexit.register(_kept.close)


@functools.cache
def _package_dir(package: str) -> Path:
    return Path(_kept.enter_context(as_file(files(package))))


def policies_dir() -> Path:
    """The built-in Rego library: `$MM2GOV_POLICIES`, else the package's copy of `policies/`."""
    return Path(os.environ.get(POLICIES_ENV) or _package_dir("governance._policies"))


def k8s_dir() -> Path:
    """The Kubernetes templates: `$MM2GOV_K8S`, else the package's copy of `k8s/`."""
    return Path(os.environ.get(K8S_ENV) or _package_dir("governance._k8s"))
