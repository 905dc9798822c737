"""Whose object it is: the tenant an admission review is held to.

The tenant never comes from the object itself (its author writes its labels): it is the
`mm2gov.io/tenant` label of its namespace as the API server has it, or, in a cluster's
Strimzi namespace (shared by every tenant, written by the platform), the tenant the
governance repo says owns what the object is: the flow a KafkaMirrorMaker2 is named after,
the user a KafkaUser is, the prefixes a KafkaTopic's name falls under, the credential a
Secret holds (`TenantIndex`). The object's own label is only compared with that tenant (a
mismatch is refused by the policy).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from governance.config.schema import Cluster
from governance.model import names
from governance.model.tenancy import Tenancy

TENANT_LABEL = "mm2gov.io/tenant"

def _add(index: dict[str, str], key: Any, tenant: str) -> None:
    """Record who owns `key`; a key two tenants claim belongs to neither (the repo rules refuse it)."""
    if isinstance(key, str) and key:
        index[key] = tenant if index.get(key, tenant) == tenant else ""


@dataclass(frozen=True)
class TenantIndex:
    """Who owns what in the repo in force: a lookup view of the resolved tenancy (`of`)."""

    shared_namespaces: frozenset[str] = frozenset()  # the Strimzi namespaces of clusters.yaml
    flows: Mapping[str, str] = field(default_factory=dict)  # flow id -> tenant
    users: Mapping[str, str] = field(default_factory=dict)  # Kafka user name -> tenant
    secrets: Mapping[str, str] = field(default_factory=dict)  # credential Secret name -> tenant
    topic_prefixes: tuple[tuple[str, str], ...] = ()  # (prefix, tenant), longest first

    @classmethod
    def of(cls, tenancy: Tenancy, clusters: Mapping[str, Cluster]) -> TenantIndex:
        """The index of the decided tenancy: every name as model/names.py derives it for compile/ (the
        KafkaUsers, Secrets, KafkaMirrorMaker2s and topics mm2gov generates), none derived here."""
        aliases = sorted(clusters)
        shared = frozenset(c.strimzi.namespace for c in clusters.values() if c.strimzi is not None)
        flows: dict[str, str] = {}
        users: dict[str, str] = {}
        secrets: dict[str, str] = {}
        prefixes: dict[str, str] = {}

        def credentials(principal: str, on: Iterable[str], tenant: str) -> None:
            for alias in on:
                _add(secrets, names.scram_secret(alias, principal), tenant)
                _add(secrets, names.tls_secret(alias, principal), tenant)

        for tenant in tenancy:
            name = tenant.tenant
            for principal in tenant.principals:
                if principal.name.startswith("User:"):
                    _add(users, names.user_name(principal.name), name)
                credentials(principal.name, aliases, name)  # a superset of the Secrets issued
            for prefix in tenant.topic_prefixes:
                _add(prefixes, prefix, name)
            if tenant.probe_principal is not None:  # the tenant's probe user, when an slo flow has one
                _add(users, names.user_name(tenant.probe_principal), name)
                credentials(tenant.probe_principal, aliases, name)
            for flow in tenant.flows:
                _add(flows, flow.id, name)
                _add(users, names.user_name(flow.mm2_principal), name)
                credentials(flow.mm2_principal, (flow.source, flow.target), name)
                for prefix in (*flow.remote_topic_prefixes, flow.internal_prefix):
                    _add(prefixes, prefix, name)
        ordered = tuple(sorted(prefixes.items(), key=lambda item: (-len(item[0]), item[0])))
        return cls(shared, flows, users, secrets, ordered)

    def owner(self, kind: str, obj: Mapping[str, Any], name: str) -> str:
        """The tenant that owns the object by what it is; "" when none (or two) do."""
        if kind == "KafkaMirrorMaker2":
            return self.flows.get(name, "")
        if kind == "KafkaUser":
            return self.users.get(name, "")
        if kind == "Secret":
            return self.secrets.get(name, "")
        if kind == "KafkaTopic":
            topic = topic_name(obj, name)
            found = [tenant for prefix, tenant in self.topic_prefixes if topic.startswith(prefix)]
            # Longest first: the longest prefix decides; one of equal length held by another tenant is a tie.
            return found[0] if found else ""
        return ""


def topic_name(obj: Mapping[str, Any], name: str) -> str:
    """The topic a KafkaTopic manages: `spec.topicName`, else the object's name (Strimzi's rule)."""
    spec = obj.get("spec")
    topic = spec.get("topicName") if isinstance(spec, dict) else None
    return topic if isinstance(topic, str) and topic else name


def resolve_tenant(kind: str, obj: Mapping[str, Any] | None, name: str, namespace: str,
                   namespace_labels: Mapping[str, Any], index: TenantIndex | None) -> tuple[str, str]:
    """(tenant, how): from the namespace's label, else in a Strimzi namespace from the repo's owner of
    what the object is; ("", "") when neither names one. Never from the object's own labels."""
    value = namespace_labels.get(TENANT_LABEL)
    if isinstance(value, str) and value:
        return value, "namespace"
    if index is not None and namespace in index.shared_namespaces and isinstance(obj, Mapping):
        owner = index.owner(kind, obj, name)
        if owner:
            return owner, "owner"
    return "", ""

