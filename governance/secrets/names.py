"""Names of the secrets mm2gov reads and writes: one convention, used by generate, apply and issue.

Secrets are referenced by name and key only (Kubernetes Secret keys, or files
`<root>/<name>/<key>` when mounted or kept in a directory); values never leave
the store.
"""

from __future__ import annotations

import hashlib
import re

PASSWORD_KEY = "password"
USERNAME_KEY = "username"
CA_CERT_KEY = "ca.crt"


def _dns_safe(text: str) -> str:
    safe = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    if safe != text.lower() or len(safe) > 200:  # keep distinct inputs distinct
        safe = f"{safe[:180]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


def user_name(principal: str) -> str:
    """The SCRAM user name of a `User:<name>` principal."""
    return principal.split(":", 1)[1]


def scram_secret(cluster: str, principal: str) -> str:
    """The secret holding `principal`'s SCRAM password on `cluster` (one per cluster: never shared)."""
    return f"scram-{cluster}-{_dns_safe(user_name(principal))}"


def tls_secret(cluster: str, principal: str) -> str:
    """The secret holding `principal`'s client certificate for `cluster` (Strimzi's KafkaUser TLS keys)."""
    return f"tls-{cluster}-{_dns_safe(user_name(principal))}"


def ca_key_secret(ca_secret: str) -> str:
    """Where a CA's private key is kept: apart from its certificate, which many namespaces get."""
    return f"{ca_secret}-key"
