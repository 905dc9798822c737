"""Secret stores: where credentials live, addressed by secret name and key.

`DirSecretStore` is the layout of a mounted Kubernetes Secret (`<root>/<name>/<key>`),
so the same paths work for a local run and inside a pod. Files are 0600.
"""

from __future__ import annotations

import os
from pathlib import Path

from governance.devstack.files import write_private
from governance.errors import RuntimeFailure
from governance.secrets.values import SecretValue


class MissingSecret(RuntimeFailure):
    """A secret the run needs is not in the store."""


class DirSecretStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, name: str, key: str) -> Path:
        if "/" in name or "/" in key or name.startswith(".") or key.startswith("."):
            raise ValueError(f"invalid secret reference {name}/{key}")
        return self.root / name / key

    def get(self, name: str, key: str) -> SecretValue:
        path = self.path(name, key)
        try:
            return SecretValue(path.read_text(encoding="utf-8").rstrip("\n"))
        except FileNotFoundError:
            raise MissingSecret(f"secret {name!r} has no key {key!r} (looked for {path})") from None

    def get_optional(self, name: str, key: str) -> SecretValue | None:
        try:
            return self.get(name, key)
        except MissingSecret:
            return None

    def put(self, name: str, key: str, value: SecretValue) -> None:
        self.put_bytes(name, key, value.reveal().encode())

    def put_bytes(self, name: str, key: str, data: bytes) -> None:
        """Binary material (PKCS12 stores): same 0600 file, no text decoding."""
        path = self.path(name, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        write_private(path, data)
