"""etcd plus a real kube-apiserver with Strimzi's CRDs, reachable with the `kubernetes` client."""

from __future__ import annotations

import ssl
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography.hazmat.primitives import serialization

from devstack import tools
from devstack.files import write_private, write_public
from devstack.process import LOOPBACK, DevstackError, ManagedProcess, ensure_port_free, free_port, start_on_free_port
from governance.secrets.pki import KeyPair, issue_cert, new_private_key
from governance.secrets.values import SecretValue

ADMIN_USER = "mm2gov-admin"


@dataclass
class KubeApiServer:
    run_dir: Path
    ca: KeyPair
    ca_pem_path: Path
    admin_token: SecretValue
    port: int = 0  # 0: chosen free at start (each port of this server and its etcd)
    etcd_port: int = 0
    etcd_peer_port: int = 0
    apply_strimzi_crds: bool = True
    etcd_process: ManagedProcess | None = None
    process: ManagedProcess | None = None

    @property
    def home(self) -> Path:
        return self.run_dir / "kube"

    @property
    def url(self) -> str:
        return f"https://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 120) -> None:
        """etcd, then kube-apiserver, then the CRDs. A port left 0 is chosen free here and chosen again when
        another process takes it before the server binds it (start_on_free_port); a port given is kept."""
        etcd, apiserver = tools.etcd(), tools.kube_apiserver()
        for port, what in ((self.port, "kube-apiserver"), (self.etcd_port, "etcd"),
                           (self.etcd_peer_port, "etcd peer")):
            if port:
                ensure_port_free(port, what)
        self._start_etcd(etcd, timeout)
        self._write_credentials()
        self.process, self.port = start_on_free_port(
            lambda port: ManagedProcess(name="kube-apiserver", argv=self._apiserver_argv(apiserver, port),
                                        log_path=self.home / "kube-apiserver.log", cwd=self.home),
            self._ready_at, timeout, "GET /readyz", self.port)
        if self.apply_strimzi_crds:
            self.apply_crds(tools.strimzi_crds(), timeout)

    def _start_etcd(self, etcd: Path, timeout: float) -> None:
        """etcd on its client port; its peer port (which nothing else uses) chosen with it when both were left
        0, so a retry on a taken port takes new ones for both. etcd binds before it writes its data dir."""
        chosen_peer = not self.etcd_peer_port

        def etcd_on(port: int) -> ManagedProcess:
            if chosen_peer:
                self.etcd_peer_port = free_port()
            client_url = f"http://{LOOPBACK}:{port}"
            peer_url = f"http://{LOOPBACK}:{self.etcd_peer_port}"
            return ManagedProcess(
                name="etcd",
                argv=[
                    str(etcd), "--name", "mm2gov", "--data-dir", str(self.home / "etcd"),
                    "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                    "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                    "--initial-cluster", f"mm2gov={peer_url}", "--log-level", "warn",
                ],
                log_path=self.home / "etcd.log",
                cwd=self.home,
                env={"ETCD_UNSUPPORTED_ARCH": "", "ETCD_ENABLE_V2": "false"},
            )

        self.etcd_process, self.etcd_port = start_on_free_port(
            etcd_on, lambda port: _http_ok(f"http://{LOOPBACK}:{port}/health"), timeout, "GET /health",
            self.etcd_port)

    def _write_credentials(self) -> None:
        serving = issue_cert(self.ca, "kube-apiserver", server=True, ip_addresses=(LOOPBACK,),
                             dns_names=("localhost", "kubernetes", "kubernetes.default.svc"))
        write_public(self.home / "tls" / "apiserver.crt", serving.cert_pem() + self.ca.cert_pem())
        write_private(self.home / "tls" / "apiserver.key", serving.key_pem())
        sa_key = new_private_key("ec")
        write_private(self.home / "tls" / "sa.key", sa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        write_public(self.home / "tls" / "sa.pub", sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        write_private(self.home / "tokens.csv",
                      f'{self.admin_token.reveal()},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'.encode())

    def _apiserver_argv(self, apiserver: Path, port: int) -> list[str]:
        tls = self.home / "tls"
        return [
            str(apiserver),
            f"--etcd-servers=http://{LOOPBACK}:{self.etcd_port}",
            f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}",
            f"--secure-port={port}",
            f"--tls-cert-file={tls / 'apiserver.crt'}", f"--tls-private-key-file={tls / 'apiserver.key'}",
            f"--token-auth-file={self.home / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={tls / 'sa.pub'}",
            f"--service-account-signing-key-file={tls / 'sa.key'}",
            "--service-cluster-ip-range=10.96.0.0/24",
            "--disable-admission-plugins=ServiceAccount",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            f"--cert-dir={tls}",
            "--v=1",
        ]

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token.reveal()}"}

    def is_ready(self) -> bool:
        return self._ready_at(self.port)

    def _ready_at(self, port: int) -> bool:
        context = ssl.create_default_context(cafile=str(self.ca_pem_path))
        request = urllib.request.Request(f"https://{LOOPBACK}:{port}/readyz", headers=self._headers())
        with urllib.request.urlopen(request, timeout=3, context=context) as response:
            return response.status == 200

    def client(self):  # -> kubernetes.client.ApiClient
        """An admin `kubernetes` ApiClient for this apiserver."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = str(self.ca_pem_path)
        configuration.api_key = {"authorization": f"Bearer {self.admin_token.reveal()}"}
        return client.ApiClient(configuration)

    def apply_crds(self, crd_dir: Path, timeout: float = 60) -> list[str]:
        """Create (or replace) every CRD in `crd_dir` and wait until each is Established."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        api = client.ApiextensionsV1Api(self.client())
        names = []
        for path in sorted(crd_dir.glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                name = doc["metadata"]["name"]
                try:
                    api.create_custom_resource_definition(body=doc)
                except ApiException as exc:
                    if exc.status != 409:
                        raise DevstackError(f"kube-apiserver refused CRD {name} from {path}: {exc.reason}") from None
                names.append(name)
        deadline = time.monotonic() + timeout
        for name in names:
            while not _established(api.read_custom_resource_definition(name)):
                if time.monotonic() > deadline:
                    raise DevstackError(f"CRD {name} not Established within {timeout:.0f}s")
                time.sleep(0.2)
        return names

    def stop(self) -> None:
        for process in (self.process, self.etcd_process):
            if process:
                process.stop()


def _established(crd) -> bool:
    conditions = (crd.status.conditions or []) if crd.status else []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200
