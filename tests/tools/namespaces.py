"""A fixed set of namespaces and their labels for the admission decider: a `NamespaceSource` for tests.

In a cluster the webhook reads namespaces from the API server (governance/admission/namespaces.py,
`NamespaceWatch`); tests that need no API server give the decider these instead.
"""

from __future__ import annotations

from typing import Any


class StaticNamespaces:
    """Fixed namespaces and their labels (`lookup` is None for any other namespace, which is denied)."""

    def __init__(self, namespaces: dict[str, dict[str, str]]) -> None:
        self.namespaces = namespaces

    def ready(self) -> bool:
        return True

    def lookup(self, namespace: str) -> dict[str, str] | None:
        return self.namespaces.get(namespace)

    def status(self) -> dict[str, Any]:
        return {"ready": True, "namespaces": len(self.namespaces), "restarts": 0, "misses": 0}
