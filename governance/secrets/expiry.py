"""Certificate expiry, for `mm2gov drift`: every CA and client certificate the repo relies on."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.secrets.names import CA_CERT_KEY, tls_secret
from governance.secrets.pki import load_cert_pem
from governance.secrets.store import SecretStore

WARN_DAYS = 30


@dataclass(frozen=True)
class CertStatus:
    secret: str
    key: str
    status: str  # ok | expiring | expired | missing
    not_after: str = ""
    days_left: int | None = None

    def to_record(self) -> dict[str, object]:
        return {"secret": self.secret, "key": self.key, "status": self.status, "not_after": self.not_after,
                "days_left": self.days_left}

    @property
    def needs_attention(self) -> bool:
        return self.status != "ok"


def status_of(secret: str, key: str, pem: bytes | None, now: dt.datetime, warn_days: int = WARN_DAYS) -> CertStatus:
    if pem is None:
        return CertStatus(secret, key, "missing")
    not_after = load_cert_pem(pem).not_valid_after_utc
    days = (not_after - now).days
    status = "expired" if not_after <= now else "expiring" if days < warn_days else "ok"
    return CertStatus(secret, key, status, not_after.isoformat(), days)


def certificate_expiry(state: DesiredState, clusters: dict[str, Cluster], store: SecretStore,
                       now: dt.datetime | None = None, warn_days: int = WARN_DAYS) -> list[CertStatus]:
    """CA certificates of TLS clusters (when present) and each principal's client certificate (expected
    wherever the cluster has a clients CA)."""
    now = now or dt.datetime.now(dt.UTC)
    found: dict[tuple[str, str], CertStatus] = {}
    for alias, cluster in sorted(clusters.items()):
        for name in (cluster.security.ca_secret, cluster.security.client_ca_secret):
            if name and cluster.security.protocol.endswith("SSL") and (name, CA_CERT_KEY) not in found:
                pem = store.get_bytes(name, CA_CERT_KEY)
                if pem is not None:
                    found[(name, CA_CERT_KEY)] = status_of(name, CA_CERT_KEY, pem, now, warn_days)
        if cluster.security.client_ca_secret:
            for principal in sorted(state.scram_users().get(alias, set())):
                name = tls_secret(alias, principal)
                found[(name, "user.crt")] = status_of(name, "user.crt", store.get_bytes(name, "user.crt"), now,
                                                      warn_days)
    return sorted(found.values(), key=lambda s: (s.status == "ok", s.secret))
