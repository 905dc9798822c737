"""Client quotas on a cluster's brokers: DescribeClientQuotas and AlterClientQuotas (KIP-546) on Kafka's `user`
entity, over the cluster's admin connection (the same settings as kafka/admin.py's AdminClient).

Why kafka-python and not confluent-kafka: confluent-kafka 2.16 (librdkafka) has no client-quota call at all.
kafka-python 3.0 carries both requests as generated protocol classes (`kafka.protocol.admin`), with SASL/SCRAM
and TLS, but its KafkaAdminClient exposes no method for them; so this module is a thin typed wrapper that
sends those two requests with kafka-python's network client (`KafkaNetClient.send_and_receive`, which picks the
highest version both sides speak) and turns the answers into mm2gov's types. Nothing else in mm2gov uses
kafka-python: every other admin call stays on confluent-kafka. The version range is narrow (pyproject.toml)
because that client is kafka-python's compatibility layer, kept stable within a minor release.

Quotas are read and written per `user` entity with no client-id part (model/quota.py); a user entity that also
has a client-id, or the default user (`<default>`), is someone else's rule and never read here.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import kafka.errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)

from governance.config.regex import split_list
from governance.errors import RuntimeFailure
from governance.model.quota import QuotaChange

log = logging.getLogger("mm2gov.kafka")
USER_ENTITY = "user"
PRINCIPAL_PREFIX = "User:"
MATCH_SPECIFIED = 2  # DescribeClientQuotas match_type: any entity with a name (not the default entity)
TIMEOUT_MS = 30000

LiveQuotas = dict[str, dict[str, float]]  # principal ("User:...") -> every key set on its user entity -> value


def client_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python settings equivalent to confluent-kafka's `config` (apply.client_config, the devstack's)."""
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    settings: dict[str, Any] = {"bootstrap_servers": split_list(str(config["bootstrap.servers"])),
                                "security_protocol": protocol, "client_id": "mm2gov-quotas",
                                "request_timeout_ms": TIMEOUT_MS, "bootstrap_timeout_ms": TIMEOUT_MS}
    if protocol.startswith("SASL"):
        settings.update(sasl_mechanism=config.get("sasl.mechanism"),
                        sasl_plain_username=config.get("sasl.username"),
                        sasl_plain_password=config.get("sasl.password"))
    if protocol.endswith("SSL"):
        context = ssl.create_default_context(cafile=config.get("ssl.ca.location"), cadata=config.get("ssl.ca.pem"))
        context.check_hostname = config.get("ssl.endpoint.identification.algorithm", "https") == "https"
        settings["ssl_context"] = context
    return settings


@contextmanager
def quota_client(alias: str, config: Mapping[str, Any]) -> Iterator[KafkaNetClient]:
    """A connected kafka-python client for the cluster; unreachable or refused: one RuntimeFailure."""
    try:
        client = KafkaNetClient(**client_settings(config))
        client.check_version(timeout_ms=TIMEOUT_MS)  # connects, authenticates and learns the API versions
    except kafka_errors.KafkaError as exc:
        raise RuntimeFailure(f"cluster {alias}: cannot connect to read or set client quotas: "
                             f"{type(exc).__name__}: {exc}") from None
    try:
        yield client
    finally:
        client.close()


def _send(alias: str, client: KafkaNetClient, request: Any, what: str) -> Any:
    try:
        return client.send_and_receive(client.least_loaded_node(bootstrap_fallback=True), request,
                                       timeout_ms=TIMEOUT_MS)
    except kafka_errors.KafkaError as exc:
        raise RuntimeFailure(f"cluster {alias}: {what}: {type(exc).__name__}: {exc}") from None


def _error(code: int, message: str | None) -> str:
    error = kafka_errors.for_code(code)
    return f"{getattr(error, 'message', error.__name__)}: {message or error.description}"


def describe_user_quotas(alias: str, client: KafkaNetClient) -> LiveQuotas:
    """Every quota set on a named `user` entity of the cluster (all keys, mm2gov's or not), by principal."""
    request = DescribeClientQuotasRequest(
        components=[DescribeClientQuotasRequest.ComponentData(entity_type=USER_ENTITY, match_type=MATCH_SPECIFIED,
                                                              match=None)],
        strict=True)  # entities made of a user alone: not user + client-id
    response: DescribeClientQuotasResponse = _send(alias, client, request, "describe client quotas")
    if response.error_code:
        raise RuntimeFailure(f"cluster {alias}: describe client quotas: "
                             f"{_error(response.error_code, response.error_message)}")
    found: LiveQuotas = {}
    for entry in response.entries or []:
        names = {entity.entity_type: entity.entity_name for entity in entry.entity}
        if set(names) == {USER_ENTITY} and names[USER_ENTITY] is not None:
            found[PRINCIPAL_PREFIX + names[USER_ENTITY]] = {value.key: value.value for value in entry.values}
    return found


def _entry(change: QuotaChange) -> AlterClientQuotasRequest.EntryData:
    entry = AlterClientQuotasRequest.EntryData
    ops = [entry.OpData(key=key, value=float(value), remove=False) for key, value in sorted(change.to_set().items())]
    ops += [entry.OpData(key=key, value=0.0, remove=True) for key in change.to_remove()]
    return entry(entity=[entry.EntityData(entity_type=USER_ENTITY, entity_name=user_entity(change.principal))],
                 ops=ops)


def user_entity(principal: str) -> str:
    """The `user` entity a principal's quota is set on: its name without `User:`."""
    return principal.removeprefix(PRINCIPAL_PREFIX)


def alter_user_quotas(alias: str, client: KafkaNetClient, changes: Iterable[QuotaChange],
                      validate_only: bool = False) -> None:
    """Set and remove the keys of each change in one AlterClientQuotas request (`validate_only`: the brokers
    check every entry and change nothing). A refused entry is one RuntimeFailure naming the cluster and the
    principal; Kafka applies the entries it accepted, which is why apply validates them all first."""
    changes = list(changes)
    if not changes:
        return
    request = AlterClientQuotasRequest(entries=[_entry(change) for change in changes], validate_only=validate_only)
    response: AlterClientQuotasResponse = _send(alias, client, request, "alter client quotas")
    refused = [(entry, _error(entry.error_code, entry.error_message))
               for entry in response.entries if entry.error_code]
    if refused:
        entry, reason = refused[0]
        names = {entity.entity_type: entity.entity_name for entity in entry.entity}
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise RuntimeFailure(f"cluster {alias}: the brokers refused the client quota of "
                             f"{PRINCIPAL_PREFIX}{names.get(USER_ENTITY)}{more}: {reason}")
    log.debug("%s: %s %d client quota change(s)", alias, "validated" if validate_only else "applied", len(changes))
