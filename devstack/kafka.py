"""A real Apache Kafka 4.x cluster (KRaft, one combined node) secured as production is.

Clients use SASL_SSL with SCRAM-SHA-512, or mTLS on a second listener that
requires a client certificate from the stack's CA (the principal is the
certificate's CN, the same `User:<name>` as the SCRAM user); the controller listener uses
SASL_SSL with PLAIN (SCRAM credentials live in the metadata log, which the
controller listener must work without). The StandardAuthorizer decides every
request, `allow.everyone.if.no.acl.found=false`, and only the stack's admin
and controller principals are super users.
"""

from __future__ import annotations

import base64
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devstack import tools
from devstack.cds import ClassArchive
from devstack.files import write_private, write_public
from devstack.process import (
    LOOPBACK,
    QUICK_JVM,
    DevstackError,
    ManagedProcess,
    ensure_port_free,
    free_port,
    port_open,
)
from governance.files import property_line
from governance.secrets.pki import KeyPair, issue_cert, pkcs12_keystore, pkcs12_truststore
from governance.secrets.values import SecretValue

ADMIN_USER = "admin"
CONTROLLER_USER = "controller"
JVM_OPTS = ["-Xms128m", "-Xmx512m", *QUICK_JVM, "-Djava.awt.headless=true"]
BIND_FAILURE = "Address already in use"  # in the broker's log when a port it wanted was taken
START_ATTEMPTS = 3

LOG4J2 = """\
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = INFO
"""


def jaas(module: str, user: str, password: SecretValue, extra: str = "") -> str:
    return f'{module} required username="{user}" password="{password.reveal()}"{extra};'


SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


def kraft_cluster_id() -> str:
    """A random Kafka Uuid in base64url; like Kafka, never one starting with '-' (a CLI flag)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


@dataclass
class KafkaCluster:
    """One single-node KRaft cluster: `name` is its alias (source, target...)."""

    name: str
    run_dir: Path
    ca: KeyPair
    ca_pem_path: Path
    admin_password: SecretValue
    controller_password: SecretValue
    store_password: SecretValue
    port: int
    controller_port: int
    mtls_port: int = 0
    node_id: int = 1
    ports_chosen: bool = False  # the ports were chosen free by the stack (not asked for): start may choose again
    process: ManagedProcess | None = None
    distribution: tools.KafkaDistribution | None = None  # None: the pinned 4.x; tools.kafka3() for an older broker
    overrides: dict[str, str] = field(default_factory=dict)  # server.properties keys set over the stack's own
    jvm_options: tuple[str, ...] = tuple(JVM_OPTS)  # the stack's small heap and quick JIT; a bench may pass others

    @property
    def dist(self) -> tools.KafkaDistribution:
        return self.distribution or tools.kafka()

    @property
    def home(self) -> Path:
        return self.run_dir / f"kafka-{self.name}"

    @property
    def bootstrap_servers(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def mtls_bootstrap_servers(self) -> str:
        return f"{LOOPBACK}:{self.mtls_port}"

    @property
    def truststore_path(self) -> Path:
        return self.home / "tls" / "truststore.p12"

    def client_config(self, user: str, password: SecretValue) -> dict[str, Any]:
        """confluent-kafka settings for a SCRAM user over SASL_SSL."""
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user,
            "sasl.password": password.reveal(),
            "ssl.ca.location": str(self.ca_pem_path),
            "ssl.endpoint.identification.algorithm": "https",
        }

    def admin_config(self) -> dict[str, Any]:
        return self.client_config(ADMIN_USER, self.admin_password)

    def server_properties(self) -> str:
        keystore = self.home / "tls" / "keystore.p12"
        listeners = [f"SASL_SSL://{LOOPBACK}:{self.port}"] + ([f"MTLS://{LOOPBACK}:{self.mtls_port}"]
                                                               if self.mtls_port else [])
        lines = {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": f"{self.node_id}@{LOOPBACK}:{self.controller_port}",
            "listeners": ",".join([*listeners, f"CONTROLLER://{LOOPBACK}:{self.controller_port}"]),
            "advertised.listeners": ",".join(listeners),
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL,MTLS:SSL",
            # mTLS: a certificate from the stack's CA is required; "CN=app,O=mm2gov" is User:app
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "RULE:^CN=([^,]+),O=mm2gov$/$1/,DEFAULT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "SASL_SSL",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": jaas(
                SCRAM_MODULE, ADMIN_USER, self.admin_password
            ),
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": jaas(
                PLAIN_MODULE,
                CONTROLLER_USER,
                self.controller_password,
                f' user_{CONTROLLER_USER}="{self.controller_password.reveal()}"',
            ),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(keystore),
            "ssl.keystore.password": self.store_password.reveal(),
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(self.truststore_path),
            "ssl.truststore.password": self.store_password.reveal(),
            "ssl.enabled.protocols": "TLSv1.3,TLSv1.2",
            "ssl.endpoint.identification.algorithm": "https",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:{ADMIN_USER};User:{CONTROLLER_USER}",
            "allow.everyone.if.no.acl.found": "false",
            "auto.create.topics.enable": "false",
            "log.dirs": str(self.home / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # no no-op record in the metadata log every 500 ms (KIP-835's liveness signal for a quorum that has
            # nothing to write; one node here): about 40% less of an idle broker's CPU (bench/devstack.py)
            "metadata.max.idle.interval.ms": "0",
            "log.segment.bytes": str(16 * 1024 * 1024),
        }
        return "".join(property_line(key, value) + "\n" for key, value in (lines | self.overrides).items())

    def _prepare(self) -> None:
        """Write TLS stores and configuration; format KRaft storage on first start."""
        server = issue_cert(self.ca, f"kafka-{self.name}", server=True, client=True,
                            ip_addresses=(LOOPBACK,), dns_names=("localhost",))
        write_private(self.home / "tls" / "keystore.p12",
                      pkcs12_keystore(server, [self.ca.cert], self.store_password, f"kafka-{self.name}"))
        write_public(self.truststore_path, pkcs12_truststore([self.ca.cert], self.store_password))
        write_private(self.home / "server.properties", self.server_properties().encode())
        write_public(self.home / "log4j2.properties", LOG4J2.encode())
        if not (self.home / "data" / "meta.properties").exists():
            self._format_storage()

    def _java(self, archive: ClassArchive, main_class: str, *args: str) -> list[str]:
        return [
            str(tools.java()), *self.jvm_options, *archive.options(),
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            "-cp", self.dist.classpath, main_class, *args,
        ]

    def _archive(self, main_class: str) -> ClassArchive:
        return ClassArchive.of(self.dist.classpath, main_class, self.jvm_options)

    def _format_storage(self) -> None:
        import subprocess

        cluster_id = kraft_cluster_id()
        archive = self._archive("kafka.tools.StorageTool")
        argv = self._java(
            archive, "kafka.tools.StorageTool", "format", "-t", cluster_id,
            "-c", str(self.home / "server.properties"),
            "--add-scram", f"SCRAM-SHA-512=[name={ADMIN_USER},password={self.admin_password.reveal()}]",
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        archive.keep(done.returncode)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).replace(self.admin_password.reveal(), "<redacted>")
            raise DevstackError(f"kafka-{self.name}: formatting KRaft storage failed:\n{output[-2000:]}")

    def start(self, timeout: float = 90) -> None:
        """Start the broker. A port chosen free can be taken before the broker binds it (by another process's
        outgoing connection, from the same ephemeral range): a fresh broker whose ports were chosen here
        (`ports_chosen`) then starts again on new free ports, from new storage, up to START_ATTEMPTS times."""
        tools.java()  # fail early, in one line, if Java is missing or too old
        self.dist  # noqa: B018 - and if the Kafka jars are missing
        fresh = not (self.home / "data" / "meta.properties").exists()
        for attempt in range(1, START_ATTEMPTS + 1):
            movable = fresh and self.ports_chosen and attempt < START_ATTEMPTS
            try:  # taken already (by another process since it was chosen): as when the broker finds it taken
                ensure_port_free(self.port, f"kafka-{self.name}")
                ensure_port_free(self.controller_port, f"kafka-{self.name} controller")
                if self.mtls_port:
                    ensure_port_free(self.mtls_port, f"kafka-{self.name} mTLS")
            except DevstackError:
                if not movable:
                    raise
                self._choose_new_ports()
                continue
            self._prepare()
            archive = self._archive("kafka.Kafka")
            self.process = ManagedProcess(
                name=f"kafka-{self.name}",
                argv=self._java(archive, "kafka.Kafka", str(self.home / "server.properties")),
                log_path=self.home / "kafka.log",
                cwd=self.home,
                after_exit=archive.keep,
            )
            log_start = self.process.log_path.stat().st_size if self.process.log_path.exists() else 0
            self.process.start()
            try:
                self.process.wait_ready(self.is_ready, timeout, f"metadata request on {self.bootstrap_servers}")
                return
            except DevstackError:
                self.process.stop()
                if not (movable and self._bind_failed(log_start)):
                    raise
                self._choose_new_ports()

    def _choose_new_ports(self) -> None:
        """New free ports for a fresh broker, its storage (formatted for the taken ones, if it was) removed."""
        shutil.rmtree(self.home / "data", ignore_errors=True)
        self.port, self.controller_port = free_port(), free_port()
        self.mtls_port = free_port() if self.mtls_port else 0

    def _bind_failed(self, log_start: int) -> bool:
        """Whether the broker's log since `log_start` says a port it wanted was taken."""
        assert self.process is not None
        with open(self.process.log_path, "rb") as log:
            log.seek(log_start)
            return BIND_FAILURE in log.read().decode(errors="replace")

    def is_ready(self) -> bool:
        from confluent_kafka.admin import AdminClient

        if not port_open(self.port):
            return False
        admin = AdminClient({**self.admin_config(), "socket.timeout.ms": 3000, "log_level": 0})
        metadata = admin.list_topics(timeout=3)
        return len(metadata.brokers) > 0
