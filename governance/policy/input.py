"""The OPA input document built from an Inventory (shape in docs/policies.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from governance.config.loader import Inventory
from governance.config.regex import split_list
from governance.config.schema import Tenant
from governance.model import mm2_settings, names
from governance.model.capacity import size_flow
from governance.model.names import flow_id
from governance.policy.engine import Violation

__all__ = ["build_input", "flow_id", "resolve_locations"]


def build_input(inventory: Inventory) -> dict[str, Any]:
    clusters = {
        name: {"name": name, "bootstrap_servers": c.bootstrap_servers, "zone": c.zone,
               "security": c.security.model_dump(),
               "strimzi_namespace": c.strimzi.namespace if c.strimzi else None,
               # For the admission rules: the Strimzi Kafka cluster (strimzi.io/cluster labels name it),
               # and the bootstrap servers as Kafka's LIST type reads them (Rego never splits lists).
               "strimzi_cluster": c.strimzi.cluster if c.strimzi else None,
               "bootstrap_server_list": split_list(c.bootstrap_servers)}
        for name, c in inventory.clusters.items()
    }
    aliases = sorted(inventory.clusters)
    return {
        "clusters": clusters,
        "tenants": {name: _tenant(t, inventory) for name, t in inventory.tenants.items()},
        # What no tenant may claim (governance/model/names.py), for the rules in reserved.rego.
        "reserved": {
            "topic": [r.to_input() for r in names.reserved_topics(aliases)],
            "group": [r.to_input() for r in names.reserved_groups(aliases)],
            "user": [r.to_input() for r in names.RESERVED_USERS],
            "namespace": [r.to_input() for r in names.RESERVED_NAMESPACES],
        },
        # capacity.yaml (docs/capacity.md), for the capacity rules; null when the platform has not calibrated
        "capacity": inventory.capacity.model_dump(mode="json") if inventory.capacity else None,
        # MirrorMaker 2's settings table (model/mm2_settings.py): admission holds each KafkaMirrorMaker2's
        # connector and worker configs to it (mirrormaker_settings.rego), never to values of its own.
        "mm2_settings": mm2_settings.admission_input(),
        # Rules answer with node paths; `resolve_locations` turns them into file:line here,
        # which keeps the input half the size.
        "locations": {},
    }


def resolve_locations(violations: Iterable[Violation], locations: dict[str, str]) -> tuple[Violation, ...]:
    """Replace each violation's node path by the `file:line` of it or its nearest ancestor."""
    return tuple(sorted({replace(v, location=_resolve(v.location, locations)) for v in violations}))


def _resolve(path: str, locations: dict[str, str]) -> str:
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        found = locations.get("/".join(parts[:end]))
        if found:
            return found
    return path


def _tenant(tenant: Tenant, inventory: Inventory) -> dict[str, Any]:
    """The tenant as declared, plus every name mm2gov derives for it (never re-derived in Rego)."""
    data = tenant.model_dump()
    # Each principal's canonical form (names.canonical): what reserved.rego compares, never the text as typed.
    # Whether its user name can name a KafkaUser (principal_not_kubernetes_name).
    for principal in data["principals"]:
        principal["canonical"] = names.canonical(principal["name"])
        principal["kubernetes_name"] = names.is_k8s_name(names.user_name(principal["name"]))
    data["flows"] = [_flow(tenant, flow.model_dump(), inventory) for flow in tenant.flows]
    aliases = sorted(inventory.clusters)
    data["names"] = {
        "namespace": names.tenant_namespace(tenant.name, tenant.namespace),
        # Per principal, its secrets on every cluster (a superset of those issued).
        "principal_secrets": [sorted({names.scram_secret(a, p.name) for a in aliases}
                                     | {names.tls_secret(a, p.name) for a in aliases})
                              for p in tenant.principals],
    }
    if any(flow.slo for flow in tenant.flows):  # its probe's user and credential Secrets (compile/acls.py)
        probe = names.probe_principal(tenant.name)
        data["names"]["probe"] = {
            "user": names.probe_user(tenant.name), "principal": probe,
            "secrets": sorted({names.scram_secret(a, probe) for a in aliases}
                              | {names.tls_secret(a, probe) for a in aliases}),
        }
    return data


def _flow(tenant: Tenant, flow: dict[str, Any], inventory: Inventory) -> dict[str, Any]:
    fid = flow_id(tenant.name, flow["source"], flow["target"])
    remote = names.remote_prefix(flow["replication_policy"], flow["source"])
    aliases = (flow["source"], flow["target"])
    return {
        **flow, "id": fid,
        "mm2_user": names.mm2_user(fid),
        "mm2_principal": names.mm2_principal(fid),
        "internal_prefix": names.mm2_internal_prefix(fid),
        # The flow's own MM2 topics on the target, and what its connectors must say to use them:
        # the flow's replication policy class and its `mm2gov.flow.*` keys (admission holds a
        # KafkaMirrorMaker2 to exactly these).
        "mm2_topics": dataclasses.asdict(names.mm2_flow_topics(fid)),
        "replication_policy_class": names.REPLICATION_POLICY_CLASSES[flow["replication_policy"]],
        "mm2_policy_config": names.mm2_flow_policy_config(fid),
        # The transactional ids its MM2 may use when `delivery` is exactly_once (KafkaUser admission
        # allows exactly these): its tasks' prefix and its Connect leader's one name.
        "transactional_ids": dataclasses.asdict(names.mm2_transactional_ids(fid)),
        "remote_prefix": remote,
        "remote_topic_prefixes": [remote + p for p in tenant.topic_prefixes],
        "mm2_secrets": sorted({names.scram_secret(a, names.mm2_principal(fid)) for a in aliases}
                              | {names.tls_secret(a, names.mm2_principal(fid)) for a in aliases}),
        # An `slo` flow also replicates its tenant's probe topic: this one exact topics item (names.py) and
        # nothing more; admission and the scopes read it from here, never re-derive it.
        "probe": _probe(tenant, flow, remote),
        "topic_patterns": [inventory.patterns[r].to_input() for r in flow["topics"]],
        "group_patterns": [inventory.patterns[r].to_input() for r in flow["groups"]],
        "k8s_objects": _k8s_objects(fid, flow, remote, inventory),
        # What its MM2 and quotas are sized to (model/capacity.py), when it declares capacity and capacity.yaml
        # knows both its clusters; else null, and the capacity rules say why when it declared some.
        "sizing": _sizing(flow, inventory),
    }


def _sizing(flow: dict[str, Any], inventory: Inventory) -> dict[str, Any] | None:
    asked, platform = flow.get("capacity"), inventory.capacity
    if asked is None or platform is None:
        return None
    source, target = platform.clusters.get(flow["source"]), platform.clusters.get(flow["target"])
    if source is None or target is None:
        return None
    node = platform.calibration.node
    return size_flow(
        bytes_per_second=asked["bytes_per_second"],
        catch_up_bytes_per_second=asked["catch_up_bytes_per_second"] or asked["bytes_per_second"],
        source_partitions=asked["source_partitions"], task_bytes_per_second=platform.calibration.task_bytes_per_second,
        tasks_per_node=node.tasks, cpu=node.cpu, memory=node.memory, heap=node.heap,
        source_brokers=source.brokers, target_brokers=target.brokers).model_dump()


def _k8s_objects(fid: str, flow: dict[str, Any], remote: str, inventory: Inventory) -> list[dict[str, str]]:
    """The Strimzi objects compile/strimzi.py names for the flow on its target (names.py), each with what it
    stands for: derived_name_collision refuses two different owners of one object."""
    strimzi = inventory.clusters[flow["target"]].strimzi
    if strimzi is None:
        return []
    objects = [{"kind": "KafkaMirrorMaker2", "namespace": strimzi.namespace,
                "name": names.mirror_maker_object(fid), "owner": f"flow {fid}", "what": "its KafkaMirrorMaker2"}]
    for topic in sorted({remote + exact for r in flow["topics"] for exact in inventory.patterns[r].exact_names()}):
        objects.append({"kind": "KafkaTopic", "namespace": strimzi.namespace, "name": names.kafka_topic_object(topic),
                        "owner": f"topic {topic}", "what": f"the KafkaTopic of its remote topic {topic}"})
    return objects


def _probe(tenant: Tenant, flow: dict[str, Any], remote: str) -> dict[str, str] | None:
    if flow.get("slo") is None:
        return None
    topic = names.probe_topic(tenant.topic_prefixes)
    return {"topic": topic, "topic_item": names.literal_regex(topic), "remote_topic": remote + topic}
