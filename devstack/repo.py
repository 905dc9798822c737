"""Small governance repos pointed at the local stack, for tests, benchmarks and the demo."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

TENANT = """\
name: {name}
owners: ["{name}@example.com"]
classification: internal
topic_prefixes: ["{name}."]
group_prefixes: ["{name}-"]
principals:
  - {{name: "User:{name}-app", access: [read, write]}}
flows:
  - {{source: {source}, target: {target}, topics: ["{name}\\\\..*"], groups: ["{name}-.*"]}}
"""


def tenant_yaml(name: str, source: str = "source", target: str = "target") -> str:
    """A tenant with one read/write principal and one flow of all its topics from source to target."""
    return TENANT.format(name=name, source=source, target=target)


def write_stack_repo(stack, root: Path, tenants: Iterable[str],
                     strimzi_namespaces: dict[str, str] | None = None, client_ca: bool = False) -> Path:
    """`root/clusters.yaml` for the stack's clusters and `root/tenants/<name>.yaml` per tenant
    (with `client_ca`, principals also get client certificates signed by the stack's CA)."""
    (root / "tenants").mkdir(parents=True, exist_ok=True)
    (root / "clusters.yaml").write_text(stack.governance_clusters(strimzi_namespaces, client_ca))
    for name in tenants:
        (root / "tenants" / f"{name}.yaml").write_text(tenant_yaml(name))
    return root
