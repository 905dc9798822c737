"""Per-tenant Kubernetes objects: the tenant's namespace and the RBAC that lets only its own
ServiceAccount read its Secrets, rendered from the template in `k8s/tenant/rbac.yaml`."""

from __future__ import annotations

import os
from pathlib import Path
from string import Template

TEMPLATE = Path(os.environ.get("MM2GOV_K8S", Path(__file__).resolve().parents[2] / "k8s")) / "tenant" / "rbac.yaml"


def tenant_manifests(tenant_namespaces: dict[str, str], header: str) -> dict[str, str]:
    """tenant -> a multi-document YAML (Namespace, ServiceAccount, Role, RoleBinding)."""
    text = TEMPLATE.read_text(encoding="utf-8")
    template = Template(text[text.index("apiVersion:"):])  # the template's own comment explains placeholders
    return {tenant: f"{header}\n" + template.substitute(TENANT=tenant, NAMESPACE=namespace)
            for tenant, namespace in sorted(tenant_namespaces.items())}
