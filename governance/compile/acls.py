"""Tenant scopes -> ACL bindings per cluster: the effective permissions a plan diffs.

Pure: the input is the resolved tenancy (governance/model/tenancy.py), the output sets of
AclBinding keyed by cluster alias. PREFIXED patterns only, always the tenant's
prefixes (which end with a separator), but for the one LITERAL transactional id
of an exactly-once flow's Connect leader and the LITERAL probe topics of a tenant's
probe principal; remote topics are read-only on targets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from governance.model.acl import AclBinding, Operation, PatternType, ResourceType
from governance.model.names import mm2_internal_prefix, mm2_transactional_ids
from governance.model.tenancy import Flow, Tenancy

ClusterBindings = dict[str, set[AclBinding]]


def tenant_bindings(tenancy: Tenancy) -> ClusterBindings:
    bindings: ClusterBindings = defaultdict(set)
    for tenant in tenancy:
        for cluster in tenant.clusters:
            for principal in tenant.principals:
                _grant(bindings[cluster], principal.name, "TOPIC", tenant.topic_prefixes, principal.topic_operations)
                _grant(bindings[cluster], principal.name, "GROUP", tenant.group_prefixes, principal.group_operations)
        for flow in tenant.flows:  # consumers of the tenant's remote topics on the target
            for principal in tenant.readers:
                _grant(bindings[flow.target], principal.name, "TOPIC", flow.remote_topic_prefixes, ["READ", "DESCRIBE"])
                _grant(bindings[flow.target], principal.name, "GROUP", tenant.group_prefixes,
                       principal.group_operations)
        for grant in tenant.grants_given:
            receiver = tenancy.tenants.get(grant.to)
            if receiver is None:
                continue
            for reader in receiver.readers:
                for cluster in tenant.clusters:
                    _grant(bindings[cluster], reader.name, "TOPIC", grant.topics, ["READ", "DESCRIBE"])
                for flow in tenant.flows:
                    _grant(bindings[flow.target], reader.name, "TOPIC", [flow.remote_name(t) for t in grant.topics],
                           ["READ", "DESCRIBE"])
    return dict(bindings)


SEPARATORS = (".", "-", "_")


def pattern_type(name: str) -> PatternType:
    """PREFIXED only for a prefix that ends with a separator; anything else is the exact name.

    A PREFIXED ACL on `payments.public` also covers `payments.publicity-raw`: by
    construction no binding mm2gov emits can reach past a separator, whatever the
    rules said about the name (FIELD.md pitfall 8).
    """
    return "PREFIXED" if name.endswith(SEPARATORS) else "LITERAL"


def _grant(into: set[AclBinding], principal: str, resource_type: ResourceType, prefixes: Sequence[str],
           operations: Sequence[Operation]) -> None:
    for prefix in prefixes:
        for operation in operations:
            into.add(AclBinding(principal, resource_type, prefix, pattern_type(prefix), operation))


CLUSTER_RESOURCE = "kafka-cluster"  # the CLUSTER resource's name, for detectors; mm2gov grants nothing on it
MM2_SOURCE_TOPIC_OPS: list[Operation] = ["READ", "DESCRIBE", "DESCRIBE_CONFIGS"]
# READ on the remote topics: MirrorCheckpointTask commits the tenant groups' translated offsets on the
# target (OffsetCommit authorises READ on each topic); READ implies the DESCRIBE the rest needs.
MM2_TARGET_REMOTE_OPS: list[Operation] = [
    "CREATE", "READ", "WRITE", "ALTER", "ALTER_CONFIGS", "DESCRIBE", "DESCRIBE_CONFIGS"]
MM2_TARGET_INTERNAL_OPS: list[Operation] = ["CREATE", "READ", "WRITE", "DESCRIBE", "DESCRIBE_CONFIGS"]
# READ on the tenant's groups on the target: describing and altering their offsets (group offset sync);
# DESCRIBE, which READ implies, spelled out as for the Connect group (the audit expands implied operations).
MM2_TARGET_GROUP_OPS: list[Operation] = ["READ", "DESCRIBE"]

# A transactional producer needs WRITE on its id (InitProducerId, AddPartitionsToTxn, EndTxn) and
# DESCRIBE (FindCoordinator), which WRITE implies; spelled out as above. Nothing on CLUSTER: since
# KIP-679 WRITE on a topic implies IDEMPOTENT_WRITE.
MM2_TRANSACTIONAL_OPS: list[Operation] = ["WRITE", "DESCRIBE"]

# (cluster, resource type, prefixes, operations)
Mm2Scope = list[tuple[str, ResourceType, Sequence[str], Sequence[Operation]]]


def mm2_scope(source: str, target: str, flow: str, topic_prefixes: Sequence[str], group_prefixes: Sequence[str],
              remote_topic_prefixes: Sequence[str], exactly_once: bool = False) -> Mm2Scope:
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


def mm2_bindings(tenancy: Tenancy) -> ClusterBindings:
    """Exactly what each flow's MM2 needs (`mm2_scope`), on the tenant's prefixes and its own topics only."""
    bindings: ClusterBindings = defaultdict(set)
    for tenant, flow in tenancy.flows():
        for cluster, resource_type, prefixes, operations in mm2_scope(
                flow.source, flow.target, flow.id, tenant.topic_prefixes, tenant.group_prefixes,
                flow.remote_topic_prefixes, exactly_once=flow.exactly_once):
            _grant(bindings[cluster], flow.mm2_principal, resource_type, prefixes, operations)
    return dict(bindings)


# The probe (`mm2gov probe`) creates its topic and writes canaries on the source, and reads them back on the
# target with assign() and no commits: no group, nothing on CLUSTER (since KIP-679 WRITE on a topic implies
# the idempotent producer's IDEMPOTENT_WRITE). DESCRIBE, which WRITE and READ imply, spelled out as above.
PROBE_SOURCE_OPS: list[Operation] = ["CREATE", "WRITE", "DESCRIBE"]
PROBE_TARGET_OPS: list[Operation] = ["READ", "DESCRIBE"]


def probe_scope(flow: Flow) -> Mm2Scope:
    """What a tenant's probe principal may do for one `slo` flow: the LITERAL probe topic on its source, the
    LITERAL remote probe topic on its target (input.py's facts; neither name ends with a separator)."""
    assert flow.probe is not None
    return [(flow.source, "TOPIC", [flow.probe.topic], PROBE_SOURCE_OPS),
            (flow.target, "TOPIC", [flow.probe.remote_topic], PROBE_TARGET_OPS)]


def probe_bindings(tenancy: Tenancy) -> ClusterBindings:
    bindings: ClusterBindings = defaultdict(set)
    for tenant, flow in tenancy.flows():
        if flow.probe and tenant.probe_principal:
            for cluster, resource_type, names, operations in probe_scope(flow):
                _grant(bindings[cluster], tenant.probe_principal, resource_type, names, operations)
    return dict(bindings)


def desired_bindings(tenancy: Tenancy) -> ClusterBindings:
    """Every ACL binding mm2gov wants, per cluster: tenants, grants, MM2 and probe principals."""
    merged: ClusterBindings = defaultdict(set)
    for part in (tenant_bindings(tenancy), mm2_bindings(tenancy), probe_bindings(tenancy)):
        for cluster, items in part.items():
            merged[cluster] |= items
    return dict(merged)
