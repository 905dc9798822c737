"""The Strimzi custom resources mm2gov writes (kafka.strimzi.io/v1), as types: each object's fields as
compile/strimzi.py fills them, never more.

Field names are Strimzi's (camelCase), so the types read like the CRDs (`KafkaMirrorMaker2Spec`,
`KafkaUserSpec`, `KafkaTopicSpec`). Optional fields (`NotRequired`) are the ones mm2gov writes only
sometimes: a cluster's `tls` (TLS protocols with a CA), `groupsExcludePattern` (a flow that excludes
groups), an ACL's resource name and pattern (not on the cluster resource) and `type: deny`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

ConnectorConfig = dict[str, str | int]  # a connector's or worker's `config`: mm2_settings' values, as is


class ObjectMeta(TypedDict):
    name: str
    namespace: str
    labels: dict[str, str]


# -- KafkaMirrorMaker2 -----------------------------------------------------------------------------------------

class PasswordSecret(TypedDict):
    """`authentication.passwordSecret`: the Secret key holding the SCRAM password, never the password."""

    secretName: str
    password: str


class ScramAuthentication(TypedDict):
    type: Literal["scram-sha-512"]
    username: str
    passwordSecret: PasswordSecret


class TrustedCertificate(TypedDict):
    secretName: str
    certificate: str


class ClientTls(TypedDict):
    trustedCertificates: list[TrustedCertificate]


class ClusterRef(TypedDict):
    """A cluster a KafkaMirrorMaker2 connects to (`spec.mirrors[].source`)."""

    alias: str
    bootstrapServers: str
    authentication: ScramAuthentication
    tls: NotRequired[ClientTls]


class TargetCluster(ClusterRef):
    """`spec.target`: the target cluster, where the flow's Connect worker runs, with its own group and topics."""

    groupId: str
    configStorageTopic: str
    offsetStorageTopic: str
    statusStorageTopic: str
    config: ConnectorConfig


class Connector(TypedDict):
    tasksMax: int
    config: ConnectorConfig


class Mirror(TypedDict):
    source: ClusterRef
    sourceConnector: Connector
    checkpointConnector: Connector
    topicsPattern: str
    topicsExcludePattern: str
    groupsPattern: str
    groupsExcludePattern: NotRequired[str]


class ResourceQuantities(TypedDict, total=False):
    cpu: str
    memory: str


class Resources(TypedDict):
    """`spec.resources` of a flow with capacity: its CPU and memory requests, memory limited to the request."""

    requests: ResourceQuantities
    limits: ResourceQuantities


JvmOptions = TypedDict("JvmOptions", {"-Xms": str, "-Xmx": str})  # a flow with capacity: its heap


class KafkaMirrorMaker2Spec(TypedDict):
    version: str
    replicas: int
    target: TargetCluster
    mirrors: list[Mirror]
    resources: NotRequired[Resources]
    jvmOptions: NotRequired[JvmOptions]


class KafkaMirrorMaker2(TypedDict):
    apiVersion: str
    kind: Literal["KafkaMirrorMaker2"]
    metadata: ObjectMeta
    spec: KafkaMirrorMaker2Spec


# -- KafkaUser -------------------------------------------------------------------------------------------------

class SecretKeyRef(TypedDict):
    name: str
    key: str


class PasswordValueFrom(TypedDict):
    secretKeyRef: SecretKeyRef


class UserPassword(TypedDict):
    valueFrom: PasswordValueFrom


class UserScramAuthentication(TypedDict):
    """`spec.authentication`: SCRAM-SHA-512 with the password mm2gov's secrets hold (by reference)."""

    type: Literal["scram-sha-512"]
    password: UserPassword


AclResourceType = Literal["topic", "group", "cluster", "transactionalId"]


class AclRuleResource(TypedDict):
    type: AclResourceType
    name: NotRequired[str]  # every type but cluster
    patternType: NotRequired[Literal["prefix", "literal"]]  # every type but cluster


class AclRule(TypedDict):
    resource: AclRuleResource
    operations: list[str]
    host: str
    type: NotRequired[Literal["deny"]]  # Strimzi's default is allow


class SimpleAuthorization(TypedDict):
    type: Literal["simple"]
    acls: list[AclRule]


class UserQuotas(TypedDict, total=False):
    """`spec.quotas` (Strimzi's names for model/quota.py's keys): the keys mm2gov sets for the user."""

    producerByteRate: int
    consumerByteRate: int
    requestPercentage: int


class KafkaUserSpec(TypedDict):
    authentication: UserScramAuthentication
    authorization: SimpleAuthorization
    quotas: NotRequired[UserQuotas]


class KafkaUser(TypedDict):
    apiVersion: str
    kind: Literal["KafkaUser"]
    metadata: ObjectMeta
    spec: KafkaUserSpec


# -- KafkaTopic ------------------------------------------------------------------------------------------------

class KafkaTopicSpec(TypedDict):
    topicName: str  # the real name; metadata.name is names.kafka_topic_object's
    config: dict[str, str | int]  # mm2gov writes it empty


class KafkaTopic(TypedDict):
    apiVersion: str
    kind: Literal["KafkaTopic"]
    metadata: ObjectMeta
    spec: KafkaTopicSpec


StrimziObject = KafkaMirrorMaker2 | KafkaUser | KafkaTopic
