"""Secret stores: where credentials live, addressed by secret name and key.

A secret is written whole (`SecretDoc`: its keys, and metadata that is safe to
show: kind, owner, fingerprint, expiry), and read one key at a time. Two stores
share that interface: `DirSecretStore` here (the layout of a mounted
Kubernetes Secret, `<root>/<name>/<key>`, so the same paths work locally and in
a pod; files are 0600) and `governance.k8s.secret_store.KubeSecretStore`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from governance.errors import RuntimeFailure
from governance.files import write_private
from governance.secrets.values import SecretValue

META_FILE = ".mm2gov.json"  # a dot-file: never a secret key, and kubelet's mounts use dot-names too


class MissingSecret(RuntimeFailure):
    """A secret the run needs is not in the store."""


@dataclass(frozen=True)
class SecretDoc:
    """One secret, whole: what issue and rotate write.

    `data` holds the values and is left out of repr; `annotations` are metadata
    that may be shown anywhere (fingerprints, expiry, generation), never values.
    """

    name: str
    kind: str  # ca | ca-key | scram | tls | admin
    data: dict[str, bytes] = field(repr=False)
    tenant: str | None = None
    cluster: str | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        labels = {"app.kubernetes.io/managed-by": "mm2gov", "mm2gov.io/kind": self.kind}
        if self.tenant:
            labels["mm2gov.io/tenant"] = self.tenant
        if self.cluster:
            labels["mm2gov.io/cluster"] = self.cluster
        return labels


class SecretStore(Protocol):
    def get(self, name: str, key: str) -> SecretValue: ...
    def get_optional(self, name: str, key: str) -> SecretValue | None: ...
    def get_bytes(self, name: str, key: str) -> bytes | None: ...
    def data(self, name: str) -> dict[str, bytes] | None: ...
    def annotations(self, name: str) -> dict[str, str] | None: ...
    def write(self, doc: SecretDoc) -> None: ...
    def delete(self, name: str) -> None: ...


def _check(part: str) -> str:
    if not part or "/" in part or part.startswith("."):
        raise ValueError(f"invalid secret name or key {part!r}")
    return part


class DirSecretStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, name: str, key: str) -> Path:
        return self.root / _check(name) / _check(key)

    def get(self, name: str, key: str) -> SecretValue:
        data = self.get_bytes(name, key)
        if data is None:
            raise MissingSecret(f"secret {name!r} has no key {key!r} (looked for {self.path(name, key)})")
        return SecretValue(data.decode("utf-8").rstrip("\n"))

    def get_optional(self, name: str, key: str) -> SecretValue | None:
        data = self.get_bytes(name, key)
        return None if data is None else SecretValue(data.decode("utf-8").rstrip("\n"))

    def get_bytes(self, name: str, key: str) -> bytes | None:
        with self._reading(name):
            try:
                return self.path(name, key).read_bytes()
            except FileNotFoundError:
                return None

    def data(self, name: str) -> dict[str, bytes] | None:
        """Every key of the secret (None when there is no such secret)."""
        folder = self.root / _check(name)
        with self._reading(name):
            if not folder.is_dir():
                return None
            return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}

    def annotations(self, name: str) -> dict[str, str] | None:
        with self._reading(name):
            try:
                annotations: dict[str, str] = json.loads((self.root / _check(name) / META_FILE).read_text())[
                    "annotations"]
                return annotations
            except FileNotFoundError:
                return {} if (self.root / name).is_dir() else None

    @contextlib.contextmanager
    def _reading(self, name: str) -> Iterator[None]:
        """A secret that cannot be read (a file where its folder belongs, a folder for a key, no permission)
        is one RuntimeFailure naming it, never a traceback; an absent one is for the caller to say."""
        try:
            yield
        except OSError as exc:
            raise RuntimeFailure(f"secret store {self.root}: cannot read secret {name!r}: "
                                 f"{exc.strerror or type(exc).__name__}") from None

    def put(self, name: str, key: str, value: SecretValue) -> None:
        """One key of a secret (the stack's exports); issue and rotate write whole docs."""
        self.put_bytes(name, key, value.reveal().encode())

    def put_bytes(self, name: str, key: str, data: bytes) -> None:
        path = self.path(name, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        write_private(path, data)

    def write(self, doc: SecretDoc) -> None:
        """Replace the secret: every key of `doc`, keys it no longer has removed, metadata beside. A folder
        that cannot be written (read-only, a mounted Secret) is one RuntimeFailure naming the secret."""
        folder = self.root / _check(doc.name)
        try:
            for key, data in doc.data.items():
                self.put_bytes(doc.name, key, data)
            for stale in folder.iterdir():
                if not stale.name.startswith(".") and stale.name not in doc.data:
                    stale.unlink()
            meta = {"kind": doc.kind, "tenant": doc.tenant, "cluster": doc.cluster, "annotations": doc.annotations}
            write_private(folder / META_FILE, json.dumps(meta, indent=1, sort_keys=True).encode())
        except OSError as exc:
            raise RuntimeFailure(f"secret store {self.root}: cannot write secret {doc.name!r}: "
                                 f"{exc.strerror or type(exc).__name__}") from None

    def delete(self, name: str) -> None:
        shutil.rmtree(self.root / _check(name), ignore_errors=True)
