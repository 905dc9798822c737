"""Small governance repos pointed at the local stack, for tests, benchmarks and the demo."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from governance.files import YAML_DUMPER


def tenant_document(name: str, source: str = "source", target: str = "target") -> dict[str, Any]:
    """A tenant with one read/write principal and one flow of all its topics from source to target."""
    return {"name": name, "owners": [f"{name}@example.com"], "classification": "internal",
            "topic_prefixes": [f"{name}."], "group_prefixes": [f"{name}-"],
            "principals": [{"name": f"User:{name}-app", "access": ["read", "write"]}],
            "flows": [{"source": source, "target": target, "topics": [f"{name}\\..*"], "groups": [f"{name}-.*"]}]}


def as_yaml(document: dict[str, Any]) -> str:
    """A repo file's text, from the product's YAML serializer."""
    return yaml.dump(document, Dumper=YAML_DUMPER, sort_keys=False)


def tenant_yaml(name: str, source: str = "source", target: str = "target") -> str:
    return as_yaml(tenant_document(name, source, target))


def write_stack_repo(stack, root: Path, tenants: Iterable[str],
                     strimzi_namespaces: dict[str, str] | None = None, client_ca: bool = False) -> Path:
    """`root/clusters.yaml` for the stack's clusters and `root/tenants/<name>.yaml` per tenant
    (with `client_ca`, principals also get client certificates signed by the stack's CA)."""
    (root / "tenants").mkdir(parents=True, exist_ok=True)
    (root / "clusters.yaml").write_text(stack.governance_clusters(strimzi_namespaces, client_ca))
    for name in tenants:
        (root / "tenants" / f"{name}.yaml").write_text(tenant_yaml(name))
    return root
