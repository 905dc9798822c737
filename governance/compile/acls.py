"""Tenant scopes -> ACL bindings per cluster: the effective permissions a plan diffs.

Pure: the input is `Decision.scopes` (docs/policies.md), the output sets of
AclBinding keyed by cluster alias. PREFIXED patterns only, always the tenant's
prefixes (which end with a separator), but for the one LITERAL transactional id
of an exactly-once flow's Connect leader and the LITERAL probe topics of a tenant's
probe principal; remote topics are read-only on targets.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from governance.config.schema import EXACTLY_ONCE
from governance.model.acl import AclBinding
from governance.model.names import (
    mm2_internal_prefix,
    mm2_principal,
    mm2_transactional_ids,
    probe_principal,
    remote_name,
)

ClusterBindings = dict[str, set[AclBinding]]


def tenant_bindings(scopes: dict[str, Any]) -> ClusterBindings:
    bindings: ClusterBindings = defaultdict(set)
    for scope in scopes.values():
        principals = scope["principals"]
        readers = [p for p in principals if "READ" in p["topic_operations"]]
        for cluster in scope["clusters"]:
            for principal in principals:
                _grant(bindings[cluster], principal["name"], "TOPIC", scope["topic_prefixes"],
                       principal["topic_operations"])
                _grant(bindings[cluster], principal["name"], "GROUP", scope["group_prefixes"],
                       principal["group_operations"])
        for flow in scope["flows"]:  # consumers of the tenant's remote topics on the target
            for principal in readers:
                _grant(bindings[flow["target"]], principal["name"], "TOPIC", flow["remote_topic_prefixes"],
                       ["READ", "DESCRIBE"])
                _grant(bindings[flow["target"]], principal["name"], "GROUP", scope["group_prefixes"],
                       principal["group_operations"])
        for grant in scope["grants_given"]:
            receiver = scopes.get(grant["to"])
            if receiver is None:
                continue
            grantees = [p["name"] for p in receiver["principals"] if "read" in p["access"]]
            for name in grantees:
                for cluster in scope["clusters"]:
                    _grant(bindings[cluster], name, "TOPIC", grant["topics"], ["READ", "DESCRIBE"])
                for flow in scope["flows"]:
                    remote = [remote_name(flow["replication_policy"], flow["source"], t) for t in grant["topics"]]
                    _grant(bindings[flow["target"]], name, "TOPIC", remote, ["READ", "DESCRIBE"])
    return dict(bindings)


SEPARATORS = (".", "-", "_")


def pattern_type(name: str) -> str:
    """PREFIXED only for a prefix that ends with a separator; anything else is the exact name.

    A PREFIXED ACL on `payments.public` also covers `payments.publicity-raw`: by
    construction no binding mm2gov emits can reach past a separator, whatever the
    rules said about the name (FIELD.md pitfall 8).
    """
    return "PREFIXED" if name.endswith(SEPARATORS) else "LITERAL"


def _grant(into: set[AclBinding], principal: str, resource_type: str, prefixes: list[str],
           operations: list[str]) -> None:
    for prefix in prefixes:
        for operation in operations:
            into.add(AclBinding(principal, resource_type, prefix, pattern_type(prefix), operation))  # type: ignore[arg-type]


CLUSTER_RESOURCE = "kafka-cluster"  # the CLUSTER resource's name, for detectors; mm2gov grants nothing on it
MM2_SOURCE_TOPIC_OPS = ["READ", "DESCRIBE", "DESCRIBE_CONFIGS"]
# READ on the remote topics: MirrorCheckpointTask commits the tenant groups' translated offsets on the
# target (OffsetCommit authorises READ on each topic); READ implies the DESCRIBE the rest needs.
MM2_TARGET_REMOTE_OPS = ["CREATE", "READ", "WRITE", "ALTER", "ALTER_CONFIGS", "DESCRIBE", "DESCRIBE_CONFIGS"]
MM2_TARGET_INTERNAL_OPS = ["CREATE", "READ", "WRITE", "DESCRIBE", "DESCRIBE_CONFIGS"]
# READ on the tenant's groups on the target: describing and altering their offsets (group offset sync);
# DESCRIBE, which READ implies, spelled out as for the Connect group (the audit expands implied operations).
MM2_TARGET_GROUP_OPS = ["READ", "DESCRIBE"]

# A transactional producer needs WRITE on its id (InitProducerId, AddPartitionsToTxn, EndTxn) and
# DESCRIBE (FindCoordinator), which WRITE implies; spelled out as above. Nothing on CLUSTER: since
# KIP-679 WRITE on a topic implies IDEMPOTENT_WRITE.
MM2_TRANSACTIONAL_OPS = ["WRITE", "DESCRIBE"]

Mm2Scope = list[tuple[str, str, list[str], list[str]]]  # (cluster, resource type, prefixes, operations)


def mm2_scope(source: str, target: str, flow: str, topic_prefixes: list[str], group_prefixes: list[str],
              remote_topic_prefixes: list[str], exactly_once: bool = False) -> Mm2Scope:
    """What a flow's MM2 principal may do, per cluster: the one definition compile and the audit read.

    Nothing on the CLUSTER resource: DESCRIBE there authorises DescribeAcls and
    DescribeUserScramCredentials, i.e. listing every tenant's ACLs and SCRAM users
    (FIELD.md pitfall 12), and a dedicated MM2 with ACL sync off starts and replicates
    without it (tests/integration/test_generate_apply.py proves both on the real broker).
    Its own topics on the target (`mm2gov.<flow>.`: Connect's, offset-syncs, checkpoints,
    heartbeats) are inside the internal prefix; the tenant's groups only on the target, where
    checkpoints sync their offsets (tests/integration/test_replication_policy.py finds each grant).
    An `exactly_once` flow's MM2 also writes transactionally on the target, as its own transactional
    ids only: its tasks' prefix and its Connect leader's one literal id (names.mm2_transactional_ids;
    tests/integration/test_mm2_exactly_once.py shows the broker refuses it without either).
    """
    internal = mm2_internal_prefix(flow)
    scope: Mm2Scope = [
        (source, "TOPIC", topic_prefixes, MM2_SOURCE_TOPIC_OPS),
        (source, "GROUP", group_prefixes, ["DESCRIBE"]),
        (target, "TOPIC", remote_topic_prefixes, MM2_TARGET_REMOTE_OPS),
        (target, "TOPIC", [internal], MM2_TARGET_INTERNAL_OPS),
        (target, "GROUP", [internal], ["READ", "DESCRIBE"]),
        (target, "GROUP", group_prefixes, MM2_TARGET_GROUP_OPS),
    ]
    if exactly_once:
        ids = mm2_transactional_ids(flow)
        scope.append((target, "TRANSACTIONAL_ID", [ids.tasks, ids.leader], MM2_TRANSACTIONAL_OPS))
    return scope


def mm2_bindings(scopes: dict[str, Any]) -> ClusterBindings:
    """Exactly what each flow's MM2 needs (`mm2_scope`), on the tenant's prefixes and its own topics only."""
    bindings: ClusterBindings = defaultdict(set)
    for scope in scopes.values():
        for flow in scope["flows"]:
            principal = mm2_principal(flow["id"])
            for cluster, resource_type, prefixes, operations in mm2_scope(
                    flow["source"], flow["target"], flow["id"], scope["topic_prefixes"], scope["group_prefixes"],
                    flow["remote_topic_prefixes"], exactly_once=flow.get("delivery") == EXACTLY_ONCE):
                _grant(bindings[cluster], principal, resource_type, prefixes, operations)
    return dict(bindings)


# The probe (`mm2gov probe`) creates its topic and writes canaries on the source, and reads them back on the
# target with assign() and no commits: no group, nothing on CLUSTER (since KIP-679 WRITE on a topic implies
# the idempotent producer's IDEMPOTENT_WRITE). DESCRIBE, which WRITE and READ imply, spelled out as above.
PROBE_SOURCE_OPS = ["CREATE", "WRITE", "DESCRIBE"]
PROBE_TARGET_OPS = ["READ", "DESCRIBE"]


def probe_scope(flow: dict[str, Any]) -> Mm2Scope:
    """What a tenant's probe principal may do for one `slo` flow: the LITERAL probe topic on its source, the
    LITERAL remote probe topic on its target (input.py's facts; neither name ends with a separator)."""
    probe = flow["probe"]
    return [(flow["source"], "TOPIC", [probe["topic"]], PROBE_SOURCE_OPS),
            (flow["target"], "TOPIC", [probe["remote_topic"]], PROBE_TARGET_OPS)]


def probe_bindings(scopes: dict[str, Any]) -> ClusterBindings:
    bindings: ClusterBindings = defaultdict(set)
    for tenant, scope in scopes.items():
        for flow in scope["flows"]:
            if flow.get("probe"):
                for cluster, resource_type, names, operations in probe_scope(flow):
                    _grant(bindings[cluster], probe_principal(tenant), resource_type, names, operations)
    return dict(bindings)


def principal_tenants(scopes: dict[str, Any]) -> dict[str, str]:
    """Who owns each principal mm2gov manages: a tenant's own principals, its flows' MM2 principals and, when
    one of its flows has an slo, its probe principal."""
    owners = {p["name"]: name for name, scope in scopes.items() for p in scope["principals"]}
    owners |= {mm2_principal(f["id"]): name for name, scope in scopes.items() for f in scope["flows"]}
    owners |= {probe_principal(name): name for name, scope in scopes.items()
               if any(f.get("probe") for f in scope["flows"])}
    return owners


def desired_bindings(scopes: dict[str, Any]) -> ClusterBindings:
    """Every ACL binding mm2gov wants, per cluster: tenants, grants, MM2 and probe principals."""
    merged: ClusterBindings = defaultdict(set)
    for part in (tenant_bindings(scopes), mm2_bindings(scopes), probe_bindings(scopes)):
        for cluster, items in part.items():
            merged[cluster] |= items
    return dict(merged)
