"""The I/O edge of `mm2gov probe`: canaries written to the tenant's probe topic on a flow's source and read
back from its remote name on the target, as the tenant's probe user (credentials from the secret store, like
MM2's). The flows are the resolved tenancy's (the policy decision). No judgement here (assess.py).

A broker that cannot be reached, or refuses the probe user, is one RuntimeFailure (exit 3) naming the cluster
and Kafka's error; a tenant or flow the repo does not give is a ConfigError (exit 2).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from governance.config.schema import Cluster
from governance.errors import ConfigError, RuntimeFailure
from governance.kafka.admin import refused_everywhere
from governance.model.names import CA_CERT_KEY, PASSWORD_KEY, PROBE_PARTITIONS, probe_principal, scram_secret, user_name
from governance.model.tenancy import Flow, Slo, Tenancy
from governance.probe.canary import Canary, Received, decode
from governance.secrets.store import SecretStore

log = logging.getLogger("mm2gov.probe")
TIMEOUT = 15.0  # one broker request
# What a broker answers about a partition of a topic created an instant ago, until its leader is known everywhere
SETTLING = frozenset({KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                      KafkaError.UNKNOWN_TOPIC_OR_PART})
GRACE = 1.0  # seconds read on after every canary arrived, so late duplicates are seen


@dataclass(frozen=True)
class ProbeFlow:
    """A flow the probe measures: its tenant and the resolved tenancy's flow (a view: nothing of its own)."""

    tenant: str
    decided: Flow  # a flow with an slo, hence with its probe facts (names.probe_topic, via input.py)

    @property
    def flow(self) -> str:
        return self.decided.id

    @property
    def source(self) -> str:
        return self.decided.source

    @property
    def target(self) -> str:
        return self.decided.target

    @property
    def topic(self) -> str:  # the probe topic on the source
        assert self.decided.probe is not None
        return self.decided.probe.topic

    @property
    def remote_topic(self) -> str:  # its name on the target
        assert self.decided.probe is not None
        return self.decided.probe.remote_topic

    @property
    def slo(self) -> Slo:
        assert self.decided.slo is not None
        return self.decided.slo


def probe_flows(tenancy: Tenancy, tenant: str, pair: tuple[str, str] | None = None) -> list[ProbeFlow]:
    """The tenant's flows with an `slo` (only `pair` = (source, target) when given), as the policy decided them."""
    if tenant not in tenancy.tenants:
        raise ConfigError(f"no tenant '{tenant}' in the repo (its tenants: {', '.join(sorted(tenancy.tenants))})")
    decided = tenancy.tenants[tenant]
    if pair and pair not in {(f.source, f.target) for f in decided.flows}:
        flows = ", ".join(f"{f.source}->{f.target}" for f in decided.flows) or "none"
        raise ConfigError(f"tenant '{tenant}' has no flow {pair[0]}->{pair[1]} (its flows: {flows})")
    chosen = [f for f in decided.flows if f.slo and f.probe and (pair is None or (f.source, f.target) == pair)]
    if not chosen:
        what = f"flow {pair[0]}->{pair[1]}" if pair else "no flow"
        raise ConfigError(f"tenants/{tenant}.yaml: {what} of tenant '{tenant}' has an slo; add "
                          "`slo: {latency_p99_ms: ...}` to the flows to probe (docs/probe.md)")
    return [ProbeFlow(tenant, f) for f in chosen]


def user_config(alias: str, cluster: Cluster, store: SecretStore, principal: str) -> dict[str, Any]:
    """confluent-kafka settings for `principal` on the cluster: its SCRAM (or PLAIN) password from its own
    Secret (names.scram_secret), as `mm2gov secrets issue` wrote it; never an admin's."""
    security = cluster.security
    config: dict[str, Any] = {"bootstrap.servers": cluster.bootstrap_servers, "security.protocol": security.protocol}
    if security.protocol.startswith("SASL"):
        config.update({"sasl.mechanism": security.sasl_mechanism, "sasl.username": user_name(principal),
                       "sasl.password": store.get(scram_secret(alias, principal), PASSWORD_KEY).reveal()})
    if security.protocol.endswith("SSL"):
        config["ssl.endpoint.identification.algorithm"] = "https"
        if security.ca_secret:
            config["ssl.ca.pem"] = store.get(security.ca_secret, CA_CERT_KEY).reveal()
    return config


def probe_configs(clusters: Mapping[str, Cluster], flow: ProbeFlow, store: SecretStore) -> tuple[dict, dict]:
    principal = probe_principal(flow.tenant)
    return (user_config(flow.source, clusters[flow.source], store, principal),
            user_config(flow.target, clusters[flow.target], store, principal))


def _failure(alias: str, what: str, error: object) -> RuntimeFailure:
    if isinstance(error, KafkaException):
        error = error.args[0] if error.args else error
    reason = f"{error.name()}: {error.str()}" if isinstance(error, KafkaError) else type(error).__name__
    return RuntimeFailure(f"cluster {alias}: {what} failed as the probe user ({reason})")


def _logger() -> logging.Logger:
    return logging.getLogger("mm2gov.librdkafka")


def _client(kind: Callable[..., Any], alias: str, config: dict[str, Any]) -> Any:
    """A confluent-kafka client; a configuration it refuses (e.g. a CA that is not PEM) is one failure."""
    try:
        return kind(config, logger=_logger())
    except KafkaException as exc:
        raise _failure(alias, "setting up the client", exc) from None


def ensure_topic(alias: str, config: dict[str, Any], topic: str) -> int:
    """The probe topic's partition count on the source, creating it (PROBE_PARTITIONS) when absent."""
    admin = _client(AdminClient, alias, {**config, "socket.timeout.ms": int(TIMEOUT * 1000)})
    if refused_everywhere(config["bootstrap.servers"]):  # nothing listens: no need to wait out the timeout
        raise RuntimeFailure(f"cluster {alias}: metadata of {topic} failed as the probe user (every bootstrap "
                             "server refused the connection)")
    partitions = _partitions(alias, admin, topic)
    if partitions:
        return partitions
    futures = admin.create_topics([NewTopic(topic, PROBE_PARTITIONS)], operation_timeout=TIMEOUT,
                                  request_timeout=TIMEOUT)
    try:
        futures[topic].result()
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise _failure(alias, f"creating {topic}", exc) from None
    deadline = time.monotonic() + TIMEOUT
    while not (partitions := _partitions(alias, admin, topic)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not partitions:
        raise RuntimeFailure(f"cluster {alias}: {topic} was created but has no partitions in the metadata yet")
    return partitions


def _partitions(alias: str, client: Any, topic: str) -> int:
    try:
        metadata = client.list_topics(topic, timeout=TIMEOUT).topics.get(topic)
    except KafkaException as exc:
        raise _failure(alias, f"metadata of {topic}", exc) from None
    if metadata is None or (metadata.error is not None and metadata.error.code() in (
            KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)):
        return 0
    if metadata.error is not None:
        raise _failure(alias, f"metadata of {topic}", metadata.error)
    return len(metadata.partitions)


def send(alias: str, config: dict[str, Any], topic: str, partitions: int, per_partition: int, run: str,
         clock: Callable[[], int]) -> list[Canary]:
    """`per_partition` canaries to every partition; the ones the source acknowledged (acks=all)."""
    producer = _client(Producer, alias, {**config, "acks": "all", "enable.idempotence": True, "linger.ms": 0,
                                         "message.timeout.ms": int(TIMEOUT * 1000)})
    try:  # connect (TLS, SASL) and learn the leaders before any canary is stamped: not replication time
        producer.list_topics(topic, timeout=TIMEOUT)
    except KafkaException as exc:
        raise _failure(alias, f"metadata of {topic}", exc) from None
    acknowledged: list[Canary] = []
    errors: list[KafkaError] = []

    def delivered(canary: Canary) -> Callable[[Any, Any], None]:
        def report(error: KafkaError | None, _message: Any) -> None:
            if error:
                errors.append(error)
            else:
                acknowledged.append(canary)
        return report

    for seq in range(per_partition):
        for partition in range(partitions):
            canary = Canary(run, partition, seq, clock())
            try:
                producer.produce(topic, canary.encode(), partition=partition, on_delivery=delivered(canary))
            except (KafkaException, BufferError) as exc:
                raise _failure(alias, f"writing to {topic}", exc) from None
            producer.poll(0)
    producer.flush(TIMEOUT + 5)
    if errors and not acknowledged:
        raise _failure(alias, f"writing to {topic}", errors[0])
    if errors:
        log.warning("cluster %s: %d of %d canaries not acknowledged (%s)", alias, len(errors),
                    partitions * per_partition, errors[0].name())
    return acknowledged


class TargetReader:
    """A read_committed consumer of the remote probe topic: assign() from the end offsets taken before the
    canaries are sent, nothing committed (the probe user has no group ACL: none is needed)."""

    def __init__(self, alias: str, config: dict[str, Any], topic: str) -> None:
        self.alias, self.topic = alias, topic
        self.consumer = _client(Consumer, alias, {
            **config, "group.id": f"mm2gov-probe-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
            "enable.auto.offset.store": False, "isolation.level": "read_committed", "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50})  # a canary's wait in an idle fetch (500 ms by default) is not replication
        self.start: dict[int, int] = {}

    def close(self) -> None:
        self.consumer.close()

    def mark(self) -> None:
        """Remember where every partition ends now (none yet: the topic is not on the target yet). A topic MM2
        has just created may not have its leader known to every broker yet (SETTLING): asked again for up to
        TIMEOUT."""
        for partition in range(_partitions(self.alias, self.consumer, self.topic)):
            deadline = time.monotonic() + TIMEOUT
            while True:
                try:
                    _, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, partition),
                                                                  timeout=TIMEOUT)
                    break
                except KafkaException as exc:
                    if not (exc.args[0].code() in SETTLING and time.monotonic() < deadline):
                        raise _failure(self.alias, f"end offsets of {self.topic}", exc) from None
                    time.sleep(0.2)
            self.start[partition] = high

    def read(self, expected: set[tuple[int, int]], run: str, deadline: float,
             clock: Callable[[], int]) -> list[Received]:
        """Records from the marked offsets until every expected (partition, seq) of `run` arrived, then GRACE
        more seconds; or until `deadline` (time.monotonic())."""
        received: list[Received] = []
        assigned = 0
        missing = set(expected)
        grace_end: float | None = None
        refresh = 0.0
        while time.monotonic() < (grace_end or deadline):
            if time.monotonic() >= refresh:  # the remote topic may appear (MM2 creates it) or grow
                refresh = time.monotonic() + 2.0
                partitions = _partitions(self.alias, self.consumer, self.topic)
                if partitions > assigned:
                    self.consumer.assign([TopicPartition(self.topic, p, self.start.get(p, 0))
                                          for p in range(partitions)])
                    assigned = partitions
            if not assigned:
                time.sleep(0.2)
                continue
            message = self.consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    continue
                # refusals and a cluster gone end the run; anything else (a dropped idle connection, the
                # refused group coordinator lookup of a consumer that never joins a group) is retried
                if message.error().fatal() or message.error().code() in (
                        KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError._ALL_BROKERS_DOWN):
                    raise _failure(self.alias, f"reading {self.topic}", message.error())
                log.debug("cluster %s: %s", self.alias, message.error().str())
                continue
            received.append(Received(message.partition(), message.offset(), message.value(), clock()))
            canary = decode(message.value())
            if canary is not None and canary.run == run:
                missing.discard((canary.partition, canary.seq))
            if not missing and grace_end is None:
                grace_end = min(deadline, time.monotonic() + GRACE)
        return received


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Run:
    run: str
    sent: list[Canary]
    received: list[Received]


def probe_once(flow: ProbeFlow, source: dict[str, Any], target: dict[str, Any], per_partition: int,
               wait: float, clock: Callable[[], int] = now_ms) -> Run:
    """One probe run of one flow: a fresh run id, canaries to every partition of the probe topic, read back."""
    run = uuid.uuid4().hex[:16]
    partitions = ensure_topic(flow.source, source, flow.topic)
    reader = TargetReader(flow.target, target, flow.remote_topic)
    try:
        reader.mark()
        sent = send(flow.source, source, flow.topic, partitions, per_partition, run, clock)
        received = reader.read({(c.partition, c.seq) for c in sent}, run, time.monotonic() + wait, clock)
    finally:
        reader.close()
    return Run(run, sent, received)
