"""Strimzi custom resources (API kafka.strimzi.io/v1) for clusters with a `strimzi` section.

KafkaMirrorMaker2 per flow (in the target cluster's namespace) and KafkaUser
per principal per cluster (SCRAM-SHA-512, simple authorization, the same ACLs
as OUT/acls). Passwords come from mm2gov's secrets by reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from governance.compile.acls import ClusterBindings
from governance.compile.mm2 import groups_exclude, topics_exclude
from governance.compile.strimzi_types import (
    AclResourceType,
    AclRule,
    AclRuleResource,
    ClientTls,
    ClusterRef,
    ConnectorConfig,
    KafkaMirrorMaker2,
    KafkaMirrorMaker2Spec,
    KafkaTopic,
    KafkaUser,
    KafkaUserSpec,
    Mirror,
    ScramAuthentication,
    StrimziObject,
    UserQuotas,
)
from governance.compile.topics import RemoteTopic
from governance.config.schema import Cluster
from governance.errors import ConfigError
from governance.model import mm2_settings
from governance.model.acl import AclBinding
from governance.model.mm2_settings import Config
from governance.model.names import (
    CA_CERT_KEY,
    PASSWORD_KEY,
    kafka_topic_object,
    mirror_maker_object,
    scram_secret,
    user_name,
)
from governance.model.quota import ClientQuota, ClusterQuotas
from governance.model.tenancy import Flow, Tenancy

API_VERSION = "kafka.strimzi.io/v1"
MANAGED_BY = {"app.kubernetes.io/managed-by": "mm2gov"}
OPERATIONS = {
    "READ": "Read", "WRITE": "Write", "CREATE": "Create", "DELETE": "Delete", "ALTER": "Alter",
    "DESCRIBE": "Describe", "CLUSTER_ACTION": "ClusterAction", "DESCRIBE_CONFIGS": "DescribeConfigs",
    "ALTER_CONFIGS": "AlterConfigs", "IDEMPOTENT_WRITE": "IdempotentWrite", "ALL": "All",
}
RESOURCE_TYPES: dict[str, AclResourceType] = {
    "TOPIC": "topic", "GROUP": "group", "CLUSTER": "cluster", "TRANSACTIONAL_ID": "transactionalId"}


def _tls(cluster: Cluster) -> ClientTls | None:
    if cluster.security.protocol not in ("SSL", "SASL_SSL") or not cluster.security.ca_secret:
        return None
    return {"trustedCertificates": [{"secretName": cluster.security.ca_secret, "certificate": CA_CERT_KEY}]}


def _authentication(alias: str, principal: str) -> ScramAuthentication:
    return {"type": "scram-sha-512", "username": user_name(principal),
            "passwordSecret": {"secretName": scram_secret(alias, principal), "password": PASSWORD_KEY}}


def _cluster_ref(alias: str, cluster: Cluster, principal: str) -> ClusterRef:
    ref: ClusterRef = {"alias": alias, "bootstrapServers": cluster.bootstrap_servers,
                           "authentication": _authentication(alias, principal)}
    tls = _tls(cluster)
    if tls:
        ref["tls"] = tls
    return ref


def settings_config(flow: Flow, config: Config) -> ConnectorConfig:
    """One config map of the flow's KafkaMirrorMaker2: the table's entries for it, in the table's order."""
    return {setting.key: setting.value for setting in mm2_settings.for_flow(flow) if config in setting.strimzi}


def mirror_maker(tenant: str, flow: Flow, clusters: Mapping[str, Cluster], kafka_version: str) -> KafkaMirrorMaker2:
    source, target, flow_id = flow.source, flow.target, flow.id
    strimzi = clusters[target].strimzi
    assert strimzi is not None
    principal, connect, name = flow.mm2_principal, flow.connect, mirror_maker_object(flow_id)
    # Every connector and worker setting is the table's (model/mm2_settings.py), the flow's own first: both
    # connectors name the flow's own offset-syncs and checkpoints topics through the flow's replication policy
    # (the image must carry replication-policy/'s jar: docs/generate-apply.md); Strimzi hands each connector
    # its config as is, so the mm2gov.flow.* keys are unscoped here. Exactly-once flows (KIP-618) get the
    # worker's transactions and the source connector's read-committed consumer (distributed mode: no
    # dedicated-mode key).
    connector_config = settings_config(flow, Config.SOURCE)
    checkpoint_config = settings_config(flow, Config.CHECKPOINT)
    worker_config = settings_config(flow, Config.WORKER)
    sized = flow.capacity  # tasks, nodes, resources and heap (model/capacity.py); None: one task on one node
    mirror: Mirror = {
        "source": _cluster_ref(source, clusters[source], principal),
        "sourceConnector": {"tasksMax": sized.tasks if sized else 1, "config": connector_config},
        # Strimzi's v1 API has no heartbeat connector: heartbeats run in the dedicated MM2 only
        "checkpointConnector": {"tasksMax": 1, "config": checkpoint_config},
        "topicsPattern": ",".join(flow.topic_items),
        "topicsExcludePattern": topics_exclude(flow.exclude_topics),
        "groupsPattern": ",".join(flow.groups) or "^$",
    }
    if flow.exclude_groups:
        mirror["groupsExcludePattern"] = groups_exclude(flow.exclude_groups)
    spec: KafkaMirrorMaker2Spec = {
        "version": kafka_version,
        "replicas": flow.nodes,
        "target": {
            **_cluster_ref(target, clusters[target], principal),
            "groupId": connect.group,
            "configStorageTopic": connect.configs,
            "offsetStorageTopic": connect.offsets,
            "statusStorageTopic": connect.status,
            "config": worker_config,
        },
        "mirrors": [mirror],
    }
    if sized:
        spec["resources"] = {"requests": {"cpu": sized.cpu, "memory": sized.memory},
                             "limits": {"memory": sized.memory}}
        spec["jvmOptions"] = {"-Xms": sized.heap, "-Xmx": sized.heap}
    return {
        "apiVersion": API_VERSION, "kind": "KafkaMirrorMaker2",
        "metadata": {"name": name, "namespace": strimzi.namespace,
                     "labels": {**MANAGED_BY, "mm2gov.io/tenant": tenant, "mm2gov.io/flow": name}},
        "spec": spec,
    }


def strimzi_acl(binding: AclBinding) -> AclRule:
    resource: AclRuleResource = {"type": RESOURCE_TYPES[binding.resource_type]}
    if binding.resource_type != "CLUSTER":
        resource["name"] = binding.resource_name
        resource["patternType"] = "prefix" if binding.pattern_type == "PREFIXED" else "literal"
    acl: AclRule = {"resource": resource, "operations": [OPERATIONS[binding.operation]], "host": binding.host}
    if binding.permission == "DENY":
        acl["type"] = "deny"
    return acl


def user_quotas(quota: ClientQuota) -> UserQuotas:
    """model/quota.py's keys as Strimzi names them in `spec.quotas` (only the ones set)."""
    quotas: UserQuotas = {}
    if quota.producer_byte_rate is not None:
        quotas["producerByteRate"] = quota.producer_byte_rate
    if quota.consumer_byte_rate is not None:
        quotas["consumerByteRate"] = quota.consumer_byte_rate
    if quota.request_percentage is not None:
        quotas["requestPercentage"] = int(quota.request_percentage)
    return quotas


def kafka_user(alias: str, cluster: Cluster, principal: str, bindings: Iterable[AclBinding],
               tenant: str | None = None, quota: ClientQuota | None = None) -> KafkaUser:
    strimzi = cluster.strimzi
    assert strimzi is not None
    labels = {**MANAGED_BY, "strimzi.io/cluster": strimzi.cluster}
    if tenant:  # the admission check reads the owning tenant from this label
        labels["mm2gov.io/tenant"] = tenant
    spec: KafkaUserSpec = {
        "authentication": {"type": "scram-sha-512", "password": {"valueFrom": {"secretKeyRef": {
            "name": scram_secret(alias, principal), "key": PASSWORD_KEY}}}},
        "authorization": {"type": "simple", "acls": [strimzi_acl(b) for b in sorted(bindings)]},
    }
    if quota:
        spec["quotas"] = user_quotas(quota)
    return {
        "apiVersion": API_VERSION, "kind": "KafkaUser",
        "metadata": {"name": user_name(principal), "namespace": strimzi.namespace, "labels": labels},
        "spec": spec,
    }


def kafka_topic(topic: RemoteTopic, cluster: Cluster) -> KafkaTopic:
    """A KafkaTopic for a remote topic; the object name is names.kafka_topic_object's, spec.topicName the real name."""
    strimzi = cluster.strimzi
    assert strimzi is not None
    name = kafka_topic_object(topic.name)
    return {
        "apiVersion": API_VERSION, "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": strimzi.namespace,
                     "labels": {**MANAGED_BY, "strimzi.io/cluster": strimzi.cluster, "mm2gov.io/tenant": topic.tenant}},
        "spec": {"topicName": topic.name, "config": {}},
    }


def compile_strimzi(tenancy: Tenancy, clusters: Mapping[str, Cluster], bindings: ClusterBindings,
                    kafka_version: str, topics: Sequence[RemoteTopic] = (),
                    quotas: ClusterQuotas | None = None) -> list[StrimziObject]:
    """All Strimzi objects, sorted by kind, namespace and name."""
    objects: list[StrimziObject] = [mirror_maker(tenant.tenant, flow, clusters, kafka_version)
                                    for tenant, flow in tenancy.flows() if clusters[flow.target].strimzi is not None]
    principal_tenants = tenancy.principal_owners()
    objects += [kafka_topic(t, clusters[t.target]) for t in topics if clusters[t.target].strimzi is not None]
    owners: dict[tuple[str, str], str] = {}
    for alias, cluster in sorted(clusters.items()):
        if cluster.strimzi is None:
            continue
        by_principal: dict[str, list[AclBinding]] = {}
        for binding in bindings.get(alias, set()):
            by_principal.setdefault(binding.principal, []).append(binding)
        for principal, items in sorted(by_principal.items()):
            key = (cluster.strimzi.namespace, user_name(principal))
            if key in owners:
                raise ConfigError(
                    f"clusters.yaml: clusters {owners[key]} and {alias} share Strimzi namespace "
                    f"{key[0]!r}, so both would need a KafkaUser named {key[1]!r}; give each cluster its own namespace")
            owners[key] = alias
            objects.append(kafka_user(alias, cluster, principal, items, principal_tenants.get(principal),
                                      (quotas or {}).get(alias, {}).get(principal)))
    return sorted(objects, key=lambda o: (o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]))
