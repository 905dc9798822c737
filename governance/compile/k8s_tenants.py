"""Per-tenant Kubernetes objects: the tenant's namespace and the RBAC that lets only its own
ServiceAccount read its Secrets, from the template in `k8s/tenant/rbac.yaml`.

The template is read as YAML data and its placeholders are replaced as values, never as text: a tenant
named `0123`, `yes` or `null` stays a string wherever it lands (the dumper quotes what YAML would read
as a number, a boolean or null), and nothing a name holds can add a key or a document.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TypedDict

import yaml

from governance import resources
from governance.errors import ConfigError
from governance.files import YAML_DUMPER, Render

TEMPLATE = resources.k8s_dir() / "tenant" / "rbac.yaml"  # $MM2GOV_K8S, else the package's copy of k8s/
PLACEHOLDERS = ("TENANT", "NAMESPACE", "RULES")  # what the template may hold: ${TENANT}, ...


class PolicyRule(TypedDict):
    """A rule of the tenant's Role (rbac.authorization.k8s.io/v1), as mm2gov writes it."""

    apiGroups: list[str]
    resources: list[str]
    resourceNames: list[str]
    verbs: list[str]


def secret_rules(names: list[str]) -> list[PolicyRule]:
    """`get` on exactly these Secrets; no rule for none (an empty resourceNames grants every Secret)."""
    if not names:
        return []
    return [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": sorted(set(names)), "verbs": ["get"]}]


def _filled(node: object, values: Mapping[str, object]) -> object:
    """`node` with every string that is exactly a placeholder (`${NAME}`) replaced by its value.

    `node` is any part of the template as YAML read it: the template is a file an operator may replace
    ($MM2GOV_K8S), so its shape is open; only its placeholders are mm2gov's."""
    if isinstance(node, dict):
        return {key: _filled(item, values) for key, item in node.items()}
    if isinstance(node, list):
        return [_filled(item, values) for item in node]
    if isinstance(node, str) and node.startswith("${") and node.endswith("}"):
        if node[2:-1] not in values:  # an unknown placeholder is an error, never left in as text
            raise ConfigError(f"{TEMPLATE}: unknown placeholder {node} (known: "
                              f"{', '.join('${' + name + '}' for name in values)})")
        return values[node[2:-1]]
    return node


def tenant_manifests(tenant_namespaces: dict[str, str], tenant_secrets: dict[str, list[str]],
                     header: str) -> dict[str, Render]:
    """tenant -> how to render its multi-document YAML (Namespace, ServiceAccount, Role, RoleBinding).

    `tenant_secrets[tenant]`: the Secrets placed in the tenant's namespace for it
    (governance.secrets.placement), the only ones its Role may read. The template is read and its
    placeholders checked here, so rendering (in `generate`'s workers, as each file is written) cannot fail.
    """
    documents: list[object] = list(yaml.safe_load_all(TEMPLATE.read_text(encoding="utf-8")))
    for document in documents:
        _filled(document, dict.fromkeys(PLACEHOLDERS))  # raises on a placeholder mm2gov does not fill

    def manifest(tenant: str) -> str:
        values = {"TENANT": tenant, "NAMESPACE": tenant_namespaces[tenant],
                  "RULES": secret_rules(tenant_secrets.get(tenant, []))}
        return f"{header}\n" + yaml.dump_all([_filled(document, values) for document in documents], Dumper=YAML_DUMPER,
                                             sort_keys=False)

    return {tenant: partial(manifest, tenant) for tenant in sorted(tenant_namespaces)}
