"""AdminClient operations mm2gov needs, each waiting for the broker's answer.

Errors come back as `RuntimeFailure` with the broker's error name and never
with a credential (client configs are not echoed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding as KafkaAclBinding,
)
from confluent_kafka.admin import (
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from governance.errors import RuntimeFailure
from governance.model.acl import AclBinding
from governance.secrets.values import SecretValue

log = logging.getLogger("mm2gov.kafka")
TIMEOUT = 30.0


def admin_client(config: dict[str, Any]) -> AdminClient:
    """An AdminClient whose librdkafka logs go to Python logging, not raw stderr."""
    return AdminClient({**config, "socket.timeout.ms": 10000}, logger=logging.getLogger("mm2gov.librdkafka"))


def _wait(futures: dict[Any, Any], what: str, ignore: tuple[str, ...] = ()) -> None:
    for key, future in futures.items():
        try:
            future.result(timeout=TIMEOUT)
        except KafkaException as exc:
            error = exc.args[0]
            if error.name() in ignore:
                continue
            raise RuntimeFailure(f"{what} {key}: {error.name()}: {error.str()}") from None


def create_topics(admin: AdminClient, names: Iterable[str], partitions: int = 1,
                  replication_factor: int = 1, exist_ok: bool = True) -> None:
    topics = [NewTopic(name, partitions, replication_factor) for name in names]
    if topics:
        _wait(admin.create_topics(topics, request_timeout=TIMEOUT), "create topic",
              ignore=("TOPIC_ALREADY_EXISTS",) if exist_ok else ())


def upsert_scram_user(admin: AdminClient, user: str, password: SecretValue,
                      mechanism: str = "SCRAM-SHA-512", iterations: int = 8192) -> None:
    mech = ScramMechanism[mechanism.replace("-", "_")]
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(mech, iterations),
                                          password.reveal().encode())
    _wait(admin.alter_user_scram_credentials([upsert], request_timeout=TIMEOUT), "SCRAM user")


def to_kafka(binding: AclBinding) -> KafkaAclBinding:
    return KafkaAclBinding(
        ResourceType[binding.resource_type], binding.resource_name,
        ResourcePatternType[binding.pattern_type], binding.principal, binding.host,
        AclOperation[binding.operation], AclPermissionType[binding.permission],
    )


def create_acls(admin: AdminClient, bindings: Iterable[AclBinding]) -> None:
    kafka_bindings = [to_kafka(b) for b in bindings]
    if kafka_bindings:
        _wait(admin.create_acls(kafka_bindings, request_timeout=TIMEOUT), "create ACL")
