"""Per-tenant Kubernetes objects: the tenant's namespace and the RBAC that lets only its own
ServiceAccount read its Secrets, rendered from the template in `k8s/tenant/rbac.yaml`."""

from __future__ import annotations

import json
from string import Template

from governance import resources

TEMPLATE = resources.k8s_dir() / "tenant" / "rbac.yaml"  # $MM2GOV_K8S, else the package's copy of k8s/


def secret_rules(names: list[str]) -> list[dict[str, object]]:
    """`get` on exactly these Secrets; no rule for none (an empty resourceNames grants every Secret)."""
    if not names:
        return []
    return [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": sorted(set(names)), "verbs": ["get"]}]


def tenant_manifests(tenant_namespaces: dict[str, str], tenant_secrets: dict[str, list[str]],
                     header: str) -> dict[str, str]:
    """tenant -> a multi-document YAML (Namespace, ServiceAccount, Role, RoleBinding).

    `tenant_secrets[tenant]`: the Secrets placed in the tenant's namespace for it
    (governance.secrets.placement), the only ones its Role may read.
    """
    text = TEMPLATE.read_text(encoding="utf-8")
    template = Template(text[text.index("apiVersion:"):])  # the template's own comment explains placeholders
    return {tenant: f"{header}\n" + template.substitute(
                TENANT=tenant, NAMESPACE=namespace,
                RULES=json.dumps(secret_rules(tenant_secrets.get(tenant, [])), separators=(", ", ": ")))
            for tenant, namespace in sorted(tenant_namespaces.items())}
