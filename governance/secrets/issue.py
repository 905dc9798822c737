"""`mm2gov secrets issue`: create the secret material a repo's desired state needs, when missing.

- per cluster with TLS: a CA (`<ca_secret>`: ca.crt, ca.p12 truststore, ca.password; the key in
  `<ca_secret>-key`), unless the store already has `<ca_secret>/ca.crt` (an imported CA, e.g.
  extracted from a Strimzi `cluster-ca-cert` Secret);
- per principal and cluster: a SCRAM-SHA-512 password (32 random bytes) and the client's JAAS
  line (`sasl.jaas.config`), in `scram-<cluster>-<user>`.

Existing secrets are never overwritten (rotation is a separate command). The result lists
secret names and fingerprints, never values.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.secrets.names import CA_CERT_KEY, PASSWORD_KEY, scram_secret, user_name
from governance.secrets.pki import new_ca, pkcs12_truststore
from governance.secrets.store import DirSecretStore
from governance.secrets.values import SecretValue, random_password

SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class Issued:
    secret: str
    kind: str  # "ca" | "scram"
    fingerprint: str  # sha256 of the public part (certificate) or of the secret name for passwords

    def to_record(self) -> dict[str, str]:
        return {"secret": self.secret, "kind": self.kind, "fingerprint": self.fingerprint}


def issue_missing(state: DesiredState, clusters: dict[str, Cluster], store: DirSecretStore,
                  algorithm: str = "ec") -> list[Issued]:
    issued: list[Issued] = []
    for alias, cluster in sorted(clusters.items()):
        ca_name = cluster.security.ca_secret
        if cluster.security.protocol.endswith("SSL") and ca_name and store.get_optional(ca_name, CA_CERT_KEY) is None:
            ca = new_ca(f"mm2gov {alias} cluster CA", algorithm=algorithm)
            password = random_password()
            store.put(ca_name, CA_CERT_KEY, SecretValue(ca.cert_pem().decode()))
            store.put_bytes(ca_name, "ca.p12", pkcs12_truststore([ca.cert], password))
            store.put(ca_name, "ca.password", password)
            store.put(f"{ca_name}-key", "ca.key", SecretValue(ca.key_pem().decode()))
            issued.append(Issued(ca_name, "ca", ca.fingerprint_sha256))
    for alias, principals in sorted(state.scram_users().items()):
        for principal in sorted(principals):
            name = scram_secret(alias, principal)
            if store.get_optional(name, PASSWORD_KEY) is not None:
                continue
            password = random_password()
            jaas = f'{SCRAM_MODULE} required username="{user_name(principal)}" password="{password.reveal()}";'
            store.put(name, PASSWORD_KEY, password)
            store.put(name, "sasl.jaas.config", SecretValue(jaas))
            issued.append(Issued(name, "scram", hashlib.sha256(name.encode()).hexdigest()[:16]))
    return issued
