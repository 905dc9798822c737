"""Kubernetes Secrets as a secret store: `type: Opaque`, labelled as owned by mm2gov,
annotated with fingerprints and expiry (never a value), one copy per namespace that reads it.

Errors from the API are reduced to status and reason: the response body of a failed
write could echo what was sent.
"""

from __future__ import annotations

import base64
from typing import Any

from governance.errors import RuntimeFailure
from governance.secrets.placement import Placement
from governance.secrets.store import MissingSecret, SecretDoc
from governance.secrets.values import SecretValue


def _failure(action: str, exc: Exception) -> RuntimeFailure:
    from kubernetes.client.exceptions import ApiException

    if isinstance(exc, ApiException):
        return RuntimeFailure(f"kubernetes: cannot {action}: HTTP {exc.status} {exc.reason}")
    return RuntimeFailure(f"kubernetes: cannot {action}: API server unreachable ({type(exc).__name__})")


class KubeSecretStore:
    def __init__(self, api_client: Any, where: Placement) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.placement = where
        self._cache: dict[str, Any] = {}
        self._namespaces: set[str] = set()

    def _read(self, name: str) -> Any | None:
        if name not in self._cache:
            from kubernetes.client.exceptions import ApiException

            namespace = self.placement.namespaces(name)[0]
            try:
                self._cache[name] = self.core.read_namespaced_secret(name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise _failure(f"read secret {namespace}/{name}", exc) from None
                self._cache[name] = None
            except Exception as exc:  # noqa: BLE001 - unreachable API server: one message
                raise _failure(f"read secret {namespace}/{name}", exc) from None
        return self._cache[name]

    def get_bytes(self, name: str, key: str) -> bytes | None:
        secret = self._read(name)
        encoded = (secret.data or {}).get(key) if secret is not None else None
        return None if encoded is None else base64.b64decode(encoded)

    def data(self, name: str) -> dict[str, bytes] | None:
        secret = self._read(name)
        return None if secret is None else {k: base64.b64decode(v) for k, v in (secret.data or {}).items()}

    def get_optional(self, name: str, key: str) -> SecretValue | None:
        data = self.get_bytes(name, key)
        return None if data is None else SecretValue(data.decode("utf-8"))

    def get(self, name: str, key: str) -> SecretValue:
        value = self.get_optional(name, key)
        if value is None:
            namespace = self.placement.namespaces(name)[0]
            raise MissingSecret(f"secret {namespace}/{name} has no key {key!r}")
        return value

    def annotations(self, name: str) -> dict[str, str] | None:
        secret = self._read(name)
        return None if secret is None else dict(secret.metadata.annotations or {})

    def _ensure_namespace(self, namespace: str) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        if namespace in self._namespaces:
            return
        try:
            self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(
                name=namespace, labels={"app.kubernetes.io/managed-by": "mm2gov"})))
        except ApiException as exc:
            if exc.status != 409:
                raise _failure(f"create namespace {namespace}", exc) from None
        except Exception as exc:  # noqa: BLE001 - unreachable API server: one message
            raise _failure(f"create namespace {namespace}", exc) from None
        self._namespaces.add(namespace)

    def write(self, doc: SecretDoc) -> None:
        """Create or replace the Secret in every namespace that reads it, the one it is read back from last:
        a write that fails part-way leaves that copy as it was, so the next `secrets issue` still finds the
        secret missing (or old) and writes every copy again, instead of trusting an incomplete set."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        for namespace in reversed(self.placement.namespaces(doc.name)):
            self._ensure_namespace(namespace)
            body = client.V1Secret(
                metadata=client.V1ObjectMeta(name=doc.name, namespace=namespace, labels=doc.labels(),
                                             annotations=dict(doc.annotations)),
                type="Opaque",
                data={key: base64.b64encode(value).decode() for key, value in doc.data.items()},
            )
            try:
                try:
                    self.core.create_namespaced_secret(namespace, body)
                except ApiException as exc:
                    if exc.status != 409:
                        raise
                    self.core.replace_namespaced_secret(doc.name, namespace, body)
            except Exception as exc:  # noqa: BLE001 - one message, never the body
                raise _failure(f"write secret {namespace}/{doc.name}", exc) from None
        self._cache.pop(doc.name, None)

    def delete(self, name: str) -> None:
        from kubernetes.client.exceptions import ApiException

        for namespace in self.placement.namespaces(name):
            try:
                self.core.delete_namespaced_secret(name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise _failure(f"delete secret {namespace}/{name}", exc) from None
        self._cache.pop(name, None)
