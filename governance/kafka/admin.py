"""AdminClient operations mm2gov needs, each waiting for the broker's answer.

Errors come back as `RuntimeFailure` with the broker's error name and never
with a credential (client configs are not echoed).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterable
from concurrent.futures import Future
from enum import Enum
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding as KafkaAclBinding,
)
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialAlteration,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from governance.config.regex import split_list
from governance.errors import RuntimeFailure
from governance.model.acl import AclBinding, as_operation, as_pattern_type, as_permission, as_resource_type
from governance.secrets.values import SecretValue

log = logging.getLogger("mm2gov.kafka")
TIMEOUT = 60.0  # librdkafka's timeout for one admin request: a batch of 1,000 ACLs on a busy broker
ANSWER_WAIT = TIMEOUT + 15  # how long mm2gov waits for a request's answer: the client's own timeout comes first


def refused_everywhere(bootstrap_servers: str, timeout: float = 2.0) -> bool:
    """Whether every bootstrap server refused a TCP connection just now. Nothing listens there, so waiting for
    the client's metadata timeout (15 s of reconnect attempts) would only give the same answer later. Any other
    outcome (a connection, a timeout, a name that does not resolve) is left to the client and its timeouts."""
    for server in split_list(bootstrap_servers):
        host, _, port = server.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return False
        except ConnectionRefusedError:
            continue
        except (OSError, ValueError):
            return False
    return True


def admin_client(config: dict[str, Any]) -> AdminClient:
    """An AdminClient whose librdkafka logs go to Python logging, not raw stderr."""
    return AdminClient({**config, "socket.timeout.ms": 10000}, logger=logging.getLogger("mm2gov.librdkafka"))


def answer(future: Future[Any], what: str, ignore: tuple[str, ...] = (), wait: float | None = None) -> Any:
    """The result of one admin request's future; the broker's error (unless its name is in `ignore`: None)
    or no answer within `wait` seconds (ANSWER_WAIT) is a RuntimeFailure naming `what`, never a traceback."""
    wait = ANSWER_WAIT if wait is None else wait
    try:
        return future.result(timeout=wait)
    except KafkaException as exc:
        error = exc.args[0]
        if error.name() in ignore:
            return None
        raise RuntimeFailure(f"{what}: {error.name()}: {error.str()}") from None
    except TimeoutError:
        raise RuntimeFailure(f"{what}: no answer from the cluster in {wait:.0f} s; nothing after it was "
                             "done, and running the command again resumes") from None


def _wait(futures: dict[Any, Any], what: str, ignore: tuple[str, ...] = ()) -> None:
    for key, future in futures.items():
        answer(future, f"{what} {key}", ignore)


def create_topics(admin: AdminClient, names: Iterable[str], partitions: int = 1,
                  replication_factor: int = 1, exist_ok: bool = True, config: dict[str, str] | None = None) -> None:
    topics = [NewTopic(name, partitions, replication_factor, config=config or {}) for name in names]
    if topics:
        _wait(admin.create_topics(topics, request_timeout=TIMEOUT), "create topic",
              ignore=("TOPIC_ALREADY_EXISTS",) if exist_ok else ())


def upsert_scram_user(admin: AdminClient, user: str, password: SecretValue,
                      mechanism: str = "SCRAM-SHA-512", iterations: int = 8192) -> None:
    upsert_scram_users(admin, {user: password}, mechanism, iterations)


def upsert_scram_users(admin: AdminClient, passwords: dict[str, SecretValue], mechanism: str = "SCRAM-SHA-512",
                       iterations: int = 8192, batch: int = 500, registered: list[str] | None = None,
                       unanswered: list[str] | None = None) -> None:
    """Create or update SCRAM credentials, `batch` users per AlterUserScramCredentials request; the first
    user the brokers refuse is a RuntimeFailure once its batch is answered. `registered` (when given) gets
    every user they took, those of that batch too: what a caller putting secrets back must leave alone;
    `unanswered` every user whose answer never came (the brokers may or may not have taken it)."""
    mech = ScramMechanism[mechanism.replace("-", "_")]
    users = sorted(passwords)
    for start in range(0, len(users), batch):
        upserts: list[UserScramCredentialAlteration] = [
            UserScramCredentialUpsertion(u, ScramCredentialInfo(mech, iterations), passwords[u].reveal().encode())
            for u in users[start:start + batch]]
        refused: RuntimeFailure | None = None
        for user, future in admin.alter_user_scram_credentials(upserts, request_timeout=TIMEOUT).items():
            try:
                answer(future, f"SCRAM user {user}")
            except RuntimeFailure as exc:
                refused = refused or exc
                if unanswered is not None and not future.done():
                    unanswered.append(user)
                continue
            if registered is not None:
                registered.append(user)
        if refused is not None:
            raise refused


# confluent-kafka calls the cluster resource BROKER; Kafka and the contract call it CLUSTER.
_TO_KAFKA_TYPE = {"CLUSTER": "BROKER"}
_FROM_KAFKA_TYPE = {"BROKER": "CLUSTER"}


def to_kafka(binding: AclBinding) -> KafkaAclBinding:
    return KafkaAclBinding(
        ResourceType[_TO_KAFKA_TYPE.get(binding.resource_type, binding.resource_type)], binding.resource_name,
        ResourcePatternType[binding.pattern_type], binding.principal, binding.host,
        AclOperation[binding.operation], AclPermissionType[binding.permission],
    )


def to_kafka_filter(binding: AclBinding) -> AclBindingFilter:
    """A filter that matches exactly this one binding."""
    exact = to_kafka(binding)
    return AclBindingFilter(exact.restype, exact.name, exact.resource_pattern_type, exact.principal, exact.host,
                            exact.operation, exact.permission_type)


def create_acls(admin: AdminClient, bindings: Iterable[AclBinding], batch: int = 1000) -> None:
    """Create bindings in batches of `batch` per CreateAcls request."""
    items = sorted(set(bindings))
    for start in range(0, len(items), batch):
        chunk = [to_kafka(b) for b in items[start:start + batch]]
        _wait(admin.create_acls(chunk, request_timeout=TIMEOUT), "create ACL")


def from_kafka(binding: KafkaAclBinding) -> AclBinding:
    """A broker's binding as mm2gov's, each name checked (model/acl.py: UNKNOWN, librdkafka's name for what it
    cannot name, is kept as read)."""
    kind = _member_name(binding.restype)
    return AclBinding(binding.principal, as_resource_type(_FROM_KAFKA_TYPE.get(kind, kind)), binding.name,
                      as_pattern_type(_member_name(binding.resource_pattern_type)),
                      as_operation(_member_name(binding.operation)),
                      as_permission(_member_name(binding.permission_type)), binding.host)


def _member_name(value: Enum | str | int) -> str:
    """The name of an enum field of confluent-kafka's AclBinding: its constructor turns every one into its enum's
    member, though its annotations keep what the constructor takes (the member, its name or its value)."""
    if not isinstance(value, Enum):
        raise TypeError(f"confluent-kafka gave {value!r} where an enum member belongs")
    return value.name


def describe_acls(admin: AdminClient) -> set[AclBinding]:
    """Every ACL binding on the cluster."""
    # None matches any name, principal and host (confluent-kafka's documented filter); its annotations, inherited
    # from AclBinding, say str
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,  # type: ignore[arg-type]
                                  AclOperation.ANY, AclPermissionType.ANY)
    found = answer(admin.describe_acls(everything, request_timeout=TIMEOUT), "describe ACLs")
    return {from_kafka(b) for b in found}


def delete_acls(admin: AdminClient, bindings: Iterable[AclBinding], batch: int = 500) -> None:
    """Delete exactly these bindings (each filter matches one binding), in batches."""
    items = sorted(set(bindings))
    for start in range(0, len(items), batch):
        filters = [to_kafka_filter(b) for b in items[start:start + batch]]
        _wait(admin.delete_acls(filters, request_timeout=TIMEOUT), "delete ACL")


def cluster_operations(admin: AdminClient) -> set[str] | None:
    """The operations the client's principal may perform on the cluster resource, as the brokers' authorizer
    answers DescribeCluster with its authorized operations (KIP-430): asked before a change, never guessed.
    None when the brokers do not say (older than Kafka 2.3)."""
    described = answer(admin.describe_cluster(include_authorized_operations=True, request_timeout=TIMEOUT),
                       "describe cluster")
    operations = described.authorized_operations
    return None if operations is None else {operation.name for operation in operations}


def check_alter(cluster: str, allowed: set[str] | None, needed_for: str) -> None:
    """A RuntimeFailure when the brokers said the admin may not ALTER the cluster, which `needed_for` takes;
    brokers that do not say (None) are let through with a warning: the change itself is then refused."""
    if allowed is None:
        log.warning("cluster %s: its brokers do not report what the admin may do (KIP-430); %s is not checked "
                    "before the first change", cluster, needed_for)
        return
    if "ALTER" not in allowed and "ALL" not in allowed:
        raise RuntimeFailure(f"cluster {cluster}: its admin principal may not ALTER the cluster (the brokers allow "
                             f"it {', '.join(sorted(allowed)) or 'nothing'}), which {needed_for} takes; nothing was "
                             "changed")


def scram_users(admin: AdminClient) -> set[str]:
    every_user = admin.describe_user_scram_credentials(request_timeout=TIMEOUT)  # no users named: one future
    if not isinstance(every_user, Future):
        raise TypeError(f"confluent-kafka gave {type(every_user).__name__} where one future belongs")
    return set(answer(every_user, "describe SCRAM users"))


def delete_scram_users(admin: AdminClient, users: Iterable[str], mechanism: str = "SCRAM-SHA-512") -> None:
    deletions: list[UserScramCredentialAlteration] = [
        UserScramCredentialDeletion(u, ScramMechanism[mechanism.replace("-", "_")]) for u in sorted(users)]
    if deletions:
        _wait(admin.alter_user_scram_credentials(deletions, request_timeout=TIMEOUT), "delete SCRAM user",
              ignore=("RESOURCE_NOT_FOUND",))
