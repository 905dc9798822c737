"""The real local stack: two Kafka clusters, OPA, etcd + kube-apiserver, MM2 on demand.

`Stack.up()` starts everything on 127.0.0.1 (free ports unless fixed), waits
for real readiness and writes `state.json` (endpoints, PIDs, log paths) in the
run directory; secret values go to `secrets/stack.json` (0600) only.
`Stack.attach(run_dir)` reads both back, for `status`, `down`, tests and
benchmarks in another process.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization

from devstack.files import write_private, write_public
from devstack.kafka import JVM_OPTS, KafkaCluster
from devstack.kube import KubeApiServer
from devstack.mirrormaker import MirrorMaker, Mm2Kafka, dedicated_properties, node_key
from devstack.opa import OpaServer
from devstack.process import DevstackError, free_port, pid_alive, port_open, stop_pid
from governance.files import YAML_DUMPER, property_line
from governance.policy.bundle import BUILTIN_DIR
from governance.secrets.names import ca_key_secret
from governance.secrets.pki import KeyPair, load_cert_pem, new_ca
from governance.secrets.values import SecretValue, random_password

REPO_ROOT = Path(__file__).resolve().parents[1]
KAFKA_CLUSTERS = ("source", "target")
COMPONENTS = ("kafka", "opa", "kube")
CA_SECRET_NAME = "devstack-ca"


@dataclass
class StackSpec:
    """What to start and where. Ports not given in `ports` are chosen free."""

    run_dir: Path
    components: tuple[str, ...] = COMPONENTS
    kafka_clusters: tuple[str, ...] = KAFKA_CLUSTERS
    policy_dirs: list[Path] = field(default_factory=lambda: [BUILTIN_DIR])  # MM2GOV_POLICIES or policies/
    ports: dict[str, int] = field(default_factory=dict)
    kafka_properties: dict[str, str] = field(default_factory=dict)  # over every broker's own (benches' A/B)
    kafka_jvm_options: tuple[str, ...] | None = None  # instead of the stack's (heap, quick JIT): a bench's


class Stack:
    def __init__(self, spec: StackSpec) -> None:
        self.spec = spec
        self.run_dir = spec.run_dir.resolve()
        self.kafka: dict[str, KafkaCluster] = {}
        self.opa: OpaServer | None = None
        self.kube: KubeApiServer | None = None
        self.mirrormakers: dict[str, MirrorMaker] = {}
        self.ca: KeyPair | None = None
        self.secrets: dict[str, SecretValue] = {}
        self.start_seconds: dict[str, float] = {}
        self.attached_pids: dict[str, int] = {}  # from state.json, when attached from another process
        self._lock = threading.RLock()  # MirrorMakers may be started from several threads at once

    # -- paths -------------------------------------------------------------
    @property
    def ca_pem_path(self) -> Path:
        return self.run_dir / "tls" / "ca.pem"

    @property
    def state_path(self) -> Path:
        return self.run_dir / "state.json"

    @property
    def secrets_path(self) -> Path:
        return self.run_dir / "secrets" / "stack.json"

    # -- lifecycle ---------------------------------------------------------
    def up(self) -> Stack:
        """Start every requested component; on any failure stop what started and raise."""
        unknown = set(self.spec.components) - set(COMPONENTS)
        if unknown:
            raise DevstackError(f"unknown devstack component(s): {', '.join(sorted(unknown))}; "
                                f"choose from {', '.join(COMPONENTS)}")
        if self.state_path.exists() and self.running():
            raise DevstackError(f"a stack is already running from {self.run_dir}: "
                                "`mm2gov devstack down` it first")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._make_ca_and_secrets()
        self._define_components()
        starters = {name: c.start for name, c in self._components().items()}
        try:
            with ThreadPoolExecutor(max_workers=len(starters) or 1) as pool:
                futures = {name: pool.submit(self._timed, name, start) for name, start in starters.items()}
                errors = [f.exception() for f in futures.values() if f.exception()]
            if errors:
                raise errors[0]
        except BaseException:
            self.down()
            raise
        self.save_state()
        return self

    def _timed(self, name: str, start) -> None:
        began = time.monotonic()
        start()
        self.start_seconds[name] = time.monotonic() - began

    def down(self) -> list[str]:
        """Stop every component of this stack by PID; returns what was stopped."""
        pids = self._pids()
        mm2 = [name for name in pids if name.startswith("mm2-")]
        stores = [name for name in pids if name == "etcd"]
        rest = [name for name in pids if name not in mm2 + stores]
        stopped = []
        # Dependants first: MM2 needs the brokers, kube-apiserver waits ~20 s for a vanished etcd.
        for wave in (mm2, rest, stores):
            with ThreadPoolExecutor(max_workers=max(len(wave), 1)) as pool:
                results = pool.map(lambda name: stop_pid(pids[name], must_contain=str(self.run_dir)), wave)
                stopped += [name for name, done in zip(wave, results, strict=True) if done]
        for process in self._processes():
            process.reap()  # our own children
        for mm2 in self.mirrormakers.values():
            if mm2.process:
                mm2.process.reap()
        if self.state_path.exists():
            self.state_path.unlink()
        return stopped

    def running(self) -> dict[str, bool]:
        return {name: pid_alive(pid) for name, pid in self._pids().items()}

    # -- MirrorMaker ---------------------------------------------------------
    def start_mirrormaker(self, flow_id: str, properties: Path, timeout: float = 120,
                          metrics_config: Path | None = None, kafka_version: Mm2Kafka = "4",
                          log4j_config: Path | None = None, node: int = 0,
                          jvm_options: tuple[str, ...] | None = None) -> MirrorMaker:
        """Start a dedicated MM2; with `metrics_config`, a JMX exporter serves its /metrics on loopback;
        `kafka_version="3"` runs the last Kafka 3.x release's MM2 instead of the pinned 4.x (an exact release of
        tools.mm2_boundary_versions(), e.g. "3.0.2", that release's); `log4j_config`
        (a flow's generated mm2/logging/ file) replaces the stack's plain-text logging. `node`: which of the
        flow's nodes this JVM is (`start_mirrormaker_nodes`); `jvm_options` replace the stack's (heap, JIT)."""
        key = node_key(flow_id, node)
        if key in self.mirrormakers and self.mirrormakers[key].process:
            raise DevstackError(f"MirrorMaker for flow {flow_id} (node {node}) already runs")
        mm2 = MirrorMaker(flow_id, properties.resolve(), self.run_dir, node=node,
                          metrics_config=metrics_config.resolve() if metrics_config else None,
                          kafka_version=kafka_version,
                          log4j_config=log4j_config.resolve() if log4j_config else None,
                          **({"jvm_options": jvm_options} if jvm_options is not None else {}))
        with self._lock:
            self.mirrormakers[key] = mm2
        try:
            mm2.start(timeout)
        except BaseException:
            mm2.stop()
            raise
        finally:
            self.save_state()
        return mm2

    def start_mirrormaker_nodes(self, flow_id: str, properties: Path, nodes: int, timeout: float = 120,
                                jvm_options: tuple[str, ...] | None = None) -> list[MirrorMaker]:
        """Run one flow's MM2 on `nodes` JVMs at once, all on the same properties file (mirrormaker.py says why
        nothing differs per node); on any failure stop the ones that started and raise."""
        with ThreadPoolExecutor(max_workers=nodes) as pool:
            futures = [pool.submit(self.start_mirrormaker, flow_id, properties, timeout, node=node,
                                   jvm_options=jvm_options) for node in range(nodes)]
            failed = [error for f in futures if (error := f.exception()) is not None]
        if failed:
            for node in range(nodes):
                if node_key(flow_id, node) in self.mirrormakers:
                    self.stop_mirrormaker(flow_id, node)
            raise failed[0]
        return [f.result() for f in futures]

    def write_mm2_properties(self, flow_id: str, topics: str, source: str = "source",
                             target: str = "target", groups: str = "") -> Path:
        """Properties for a stack-admin MM2 flow; passwords go to a 0600 file it references."""
        credentials = self.run_dir / "secrets" / f"mm2-{flow_id}.properties"
        values = {f"{alias}.password": self.secrets[f"kafka.{alias}.admin.password"] for alias in (source, target)}
        values["truststore.password"] = self.secrets["store.password"]
        write_private(credentials, "".join(property_line(k, v.reveal()) + "\n" for k, v in values.items()).encode())
        clusters = {
            alias: {"bootstrap": k.bootstrap_servers, "truststore": str(k.truststore_path), "user": "admin"}
            for alias, k in self.kafka.items()
        }
        path = self.run_dir / f"mm2-{flow_id}.properties"
        text = dedicated_properties(flow_id, clusters, source, target, topics, credentials, groups)
        write_public(path, text.encode())
        return path

    def export_secret_store(self, root: Path) -> None:
        """Put the stack's CA and each cluster's admin credentials into a secret store at `root`
        (layout <root>/<secret>/<key>, 0600), named as `governance_clusters()` references them."""
        from governance.secrets.store import DirSecretStore

        store = DirSecretStore(root)
        store.put(CA_SECRET_NAME, "ca.crt", SecretValue(self.ca_pem_path.read_text()))
        # the CA's key too: the brokers' mTLS listener trusts this CA, so client certificates
        # that `mm2gov secrets issue` signs with it are accepted (a dev stack, not production)
        store.put(ca_key_secret(CA_SECRET_NAME), "ca.key", SecretValue(self.ca.key_pem().decode()))
        for alias in self.kafka:
            store.put(f"{alias}-admin", "username", SecretValue("admin"))
            store.put(f"{alias}-admin", "password", self.secrets[f"kafka.{alias}.admin.password"])

    def write_kubeconfig(self, path: Path) -> Path:
        """A kubeconfig (0600) for the stack's kube-apiserver as its admin user."""
        assert self.kube is not None, "the stack runs without kube"
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "mm2gov-devstack",
            "clusters": [{"name": "devstack", "cluster": {"server": self.kube.url,
                                                          "certificate-authority": str(self.ca_pem_path)}}],
            "users": [{"name": "mm2gov-admin", "user": {"token": self.kube.admin_token.reveal()}}],
            "contexts": [{"name": "mm2gov-devstack", "context": {"cluster": "devstack", "user": "mm2gov-admin"}}],
        }
        write_private(path, yaml.dump(config, Dumper=YAML_DUMPER).encode())
        return path

    def governance_clusters_document(self, strimzi_namespaces: dict[str, str] | None = None,
                                     client_ca: bool = False) -> dict[str, Any]:
        """A clusters.yaml document for a governance repo that points at this stack's Kafka clusters."""
        clusters: dict[str, Any] = {}
        for alias, cluster in self.kafka.items():
            security = {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": CA_SECRET_NAME,
                        "admin_credentials_secret": f"{alias}-admin"}
            if client_ca:
                security["client_ca_secret"] = CA_SECRET_NAME
            clusters[alias] = {"bootstrap_servers": cluster.bootstrap_servers,
                               "zone": "cloud" if alias in ("target", "cloud") else "onprem", "security": security}
            if strimzi_namespaces and alias in strimzi_namespaces:
                clusters[alias]["strimzi"] = {"namespace": strimzi_namespaces[alias], "cluster": alias}
        return {"clusters": clusters}

    def governance_clusters(self, strimzi_namespaces: dict[str, str] | None = None, client_ca: bool = False) -> str:
        """governance_clusters_document as the file's text (secrets come from export_secret_store())."""
        return yaml.dump(self.governance_clusters_document(strimzi_namespaces, client_ca), Dumper=YAML_DUMPER,
                         sort_keys=False)

    def stop_mirrormaker(self, flow_id: str, node: int = 0) -> None:
        with self._lock:
            mm2 = self.mirrormakers.pop(node_key(flow_id, node))
        mm2.stop()
        self.save_state()

    def kill_mirrormaker(self, flow_id: str, node: int = 0) -> None:
        """Crash a flow's MM2 (one node of it: SIGKILL); start_mirrormaker starts it again."""
        with self._lock:
            mm2 = self.mirrormakers.pop(node_key(flow_id, node))
        mm2.kill()
        self.save_state()

    # -- construction ------------------------------------------------------
    def _port(self, key: str) -> int:
        return self.spec.ports.get(key) or free_port()

    def _make_ca_and_secrets(self) -> None:
        key_path = self.run_dir / "tls" / "ca.key"
        if key_path.exists() and self.ca_pem_path.exists() and self.secrets_path.exists():
            key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
            self.ca = KeyPair(key, load_cert_pem(self.ca_pem_path.read_bytes()))  # type: ignore[arg-type]
            self.secrets = _load_secrets(self.secrets_path)
            return
        self.ca = new_ca("mm2gov devstack CA")
        write_private(key_path, self.ca.key_pem())
        write_public(self.ca_pem_path, self.ca.cert_pem())
        names = ["store.password", "kube.admin.token"]
        for cluster in self.spec.kafka_clusters:
            names += [f"kafka.{cluster}.admin.password", f"kafka.{cluster}.controller.password"]
        self.secrets = {name: random_password() for name in names}
        write_private(self.secrets_path,
                      json.dumps({k: v.reveal() for k, v in self.secrets.items()}, indent=1).encode())

    def _define_components(self) -> None:
        assert self.ca is not None
        if "kafka" in self.spec.components:
            for cluster in self.spec.kafka_clusters:
                self.kafka[cluster] = KafkaCluster(
                    name=cluster, run_dir=self.run_dir, ca=self.ca, ca_pem_path=self.ca_pem_path,
                    admin_password=self.secrets[f"kafka.{cluster}.admin.password"],
                    controller_password=self.secrets[f"kafka.{cluster}.controller.password"],
                    store_password=self.secrets["store.password"],
                    port=self._port(f"kafka-{cluster}"),
                    controller_port=self._port(f"kafka-{cluster}-controller"),
                    mtls_port=self._port(f"kafka-{cluster}-mtls"),
                    ports_chosen=not any(key in self.spec.ports for key in (
                        f"kafka-{cluster}", f"kafka-{cluster}-controller", f"kafka-{cluster}-mtls")),
                    overrides=dict(self.spec.kafka_properties),
                    jvm_options=self.spec.kafka_jvm_options or tuple(JVM_OPTS),
                )
        if "opa" in self.spec.components:
            self.opa = OpaServer(self.run_dir, self.spec.ports.get("opa", 0), list(self.spec.policy_dirs))
        if "kube" in self.spec.components:
            self.kube = KubeApiServer(
                run_dir=self.run_dir, ca=self.ca, ca_pem_path=self.ca_pem_path,
                admin_token=self.secrets["kube.admin.token"], port=self.spec.ports.get("kube-apiserver", 0),
                etcd_port=self.spec.ports.get("etcd", 0), etcd_peer_port=self.spec.ports.get("etcd-peer", 0),
            )

    def _components(self) -> dict[str, Any]:
        found: dict[str, Any] = {f"kafka-{name}": cluster for name, cluster in self.kafka.items()}
        if self.opa:
            found["opa"] = self.opa
        if self.kube:
            found["kube"] = self.kube
        return found

    def _processes(self):
        for component in self._components().values():
            for attr in ("etcd_process", "process"):
                process = getattr(component, attr, None)
                if process is not None:
                    yield process

    def _pids(self) -> dict[str, int]:
        pids = dict(self.attached_pids)
        pids.update({p.name: p.pid for p in self._processes() if p.pid})
        pids.update({m.process.name: m.process.pid for m in self.mirrormakers.values()
                     if m.process and m.process.pid})
        return pids

    # -- state -------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Endpoints, PIDs and logs of every component: what runs where (no secret values)."""
        endpoints: dict[str, dict[str, Any]] = {}
        for name, cluster in self.kafka.items():
            endpoints[f"kafka-{name}"] = {
                "endpoint": f"SASL_SSL://{cluster.bootstrap_servers}",
                "controller": f"127.0.0.1:{cluster.controller_port}",
                "mtls": f"SSL://{cluster.mtls_bootstrap_servers}",
                "sasl": "SCRAM-SHA-512", "admin_user": "admin",
                "log": str(cluster.home / "kafka.log"),
            }
        if self.opa:
            endpoints["opa"] = {"endpoint": self.opa.url, "log": str(self.run_dir / "opa" / "opa.log")}
        if self.kube:
            endpoints["etcd"] = {"endpoint": f"http://127.0.0.1:{self.kube.etcd_port}",
                                 "log": str(self.kube.home / "etcd.log")}
            endpoints["kube-apiserver"] = {"endpoint": self.kube.url, "user": "mm2gov-admin",
                                           "log": str(self.kube.home / "kube-apiserver.log")}
        for flow, mm2 in self.mirrormakers.items():
            endpoints[f"mm2-{flow}"] = {"properties": str(mm2.properties), "log": str(mm2.log_path)}
            if mm2.metrics_url:
                endpoints[f"mm2-{flow}"]["endpoint"] = mm2.metrics_url
        for name, pid in self._pids().items():
            endpoints.setdefault(name, {})["pid"] = pid
        return {
            "run_dir": str(self.run_dir),
            "ca": str(self.ca_pem_path),
            "secrets_file": str(self.secrets_path),
            "components": endpoints,
        }

    def save_state(self) -> None:
        with self._lock:
            self._save_state()

    def _save_state(self) -> None:
        state = {"spec": {"components": list(self.spec.components),
                          "kafka_clusters": list(self.spec.kafka_clusters),
                          "policy_dirs": [str(p) for p in self.spec.policy_dirs]},
                 "ports": self._ports(), "pids": self._pids(),
                 "mirrormakers": {f: str(m.properties) for f, m in self.mirrormakers.items()},
                 **self.describe()}
        write_public(self.state_path, json.dumps(state, indent=2).encode())

    def _ports(self) -> dict[str, int]:
        ports = {}
        for name, cluster in self.kafka.items():
            ports[f"kafka-{name}"] = cluster.port
            ports[f"kafka-{name}-controller"] = cluster.controller_port
            ports[f"kafka-{name}-mtls"] = cluster.mtls_port
        if self.opa:
            ports["opa"] = self.opa.port
        if self.kube:
            ports.update({"kube-apiserver": self.kube.port, "etcd": self.kube.etcd_port,
                          "etcd-peer": self.kube.etcd_peer_port})
        return ports

    @classmethod
    def attach(cls, run_dir: Path) -> Stack:
        """The stack described by `run_dir/state.json`, to query or stop it from another process."""
        run_dir = run_dir.resolve()
        state_path = run_dir / "state.json"
        if not state_path.exists():
            raise DevstackError(f"no stack state in {run_dir}: `mm2gov devstack up` first")
        state = json.loads(state_path.read_text())
        spec = StackSpec(run_dir=run_dir, components=tuple(state["spec"]["components"]),
                         kafka_clusters=tuple(state["spec"]["kafka_clusters"]),
                         policy_dirs=[Path(p) for p in state["spec"]["policy_dirs"]],
                         ports=state["ports"])
        stack = cls(spec)
        stack._make_ca_and_secrets()
        stack._define_components()
        stack.attached_pids = state["pids"]
        for flow, props in state.get("mirrormakers", {}).items():
            stack.mirrormakers[flow] = MirrorMaker(flow, Path(props), run_dir)
        return stack

    def health(self) -> dict[str, str]:
        """Per component: 'ready', 'not ready' (process alive, probe failing) or 'stopped'."""
        result = {}
        pids = self._pids()
        probes: dict[str, Any] = {f"kafka-{n}": c.is_ready for n, c in self.kafka.items()}
        if self.opa:
            probes["opa"] = self.opa.is_ready
        if self.kube:
            probes["kube-apiserver"] = self.kube.is_ready
            probes["etcd"] = lambda: port_open(self.kube.etcd_port)  # type: ignore[union-attr]
        for name, pid in pids.items():
            if not pid_alive(pid):
                result[name] = "stopped"
                continue
            try:
                ready = probes[name]() if name in probes else True
            except Exception:  # noqa: BLE001 - any probe failure means "not ready"
                ready = False
            result[name] = "ready" if ready else "not ready"
        return result


def _load_secrets(path: Path) -> dict[str, SecretValue]:
    return {k: SecretValue(v) for k, v in json.loads(path.read_text()).items()}
