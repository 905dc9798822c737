"""`mm2gov secrets issue`: create the secret material a repo's desired state needs, when missing.

- per cluster with TLS: a CA (`<ca_secret>`: ca.crt, ca.p12 truststore, ca.password; the key in
  `<ca_secret>-key`), unless the store already has `<ca_secret>/ca.crt` (an imported CA, e.g.
  extracted from a Strimzi `cluster-ca-cert` Secret);
- per principal and cluster: a SCRAM-SHA-512 password (32 random bytes) and the client's JAAS
  line (`sasl.jaas.config`), in `scram-<cluster>-<user>`;
- per principal on a cluster with `client_ca_secret`: a client certificate for mTLS in
  `tls-<cluster>-<user>` with Strimzi's KafkaUser keys (ca.crt, user.crt, user.key, user.p12,
  user.password), signed by the clients CA (created when missing, or imported with its key).

Existing secrets are never overwritten (rotation is `rotate.py`). The result lists secret
names, fingerprints and expiry, never values.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes, serialization

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.errors import RuntimeFailure
from governance.secrets.names import (
    CA_CERT_KEY,
    PASSWORD_KEY,
    USERNAME_KEY,
    ca_key_secret,
    scram_secret,
    tls_secret,
    user_name,
)
from governance.secrets.pki import (
    KeyPair,
    PrivateKey,
    issue_cert,
    load_cert_pem,
    new_ca,
    pkcs12_keystore,
    pkcs12_truststore,
)
from governance.secrets.store import SecretDoc, SecretStore
from governance.secrets.values import SecretValue, random_password

SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
FINGERPRINT = "mm2gov.io/fingerprint"
NOT_AFTER = "mm2gov.io/not-after"
GENERATION = "mm2gov.io/generation"
ISSUED_AT = "mm2gov.io/issued-at"
CLIENT_CERT_DAYS = 365


@dataclass(frozen=True)
class Issued:
    secret: str
    kind: str  # "ca" | "scram" | "tls"
    fingerprint: str = ""  # sha256 of the certificate; "" for passwords (nothing about them is shown)
    not_after: str = ""
    generation: int = 1
    issued_at: str = field(default_factory=lambda: _now())

    def to_record(self) -> dict[str, object]:
        return {"secret": self.secret, "kind": self.kind, "fingerprint": self.fingerprint,
                "not_after": self.not_after, "generation": self.generation}

    def describe(self) -> str:
        detail = f"sha256:{self.fingerprint[:16]} until {self.not_after[:10]}" if self.fingerprint else ""
        return f"{self.kind:<5} {self.secret}  generation {self.generation}  {detail}".rstrip()


def _now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def cert_annotations(pair: KeyPair, generation: int = 1) -> dict[str, str]:
    return {FINGERPRINT: f"sha256:{pair.fingerprint_sha256}",
            NOT_AFTER: pair.cert.not_valid_after_utc.isoformat(),
            GENERATION: str(generation), ISSUED_AT: _now()}


def ca_docs(name: str, ca: KeyPair, cluster: str | None) -> tuple[SecretDoc, SecretDoc]:
    """The CA's public secret (many namespaces read it) and its key (the system namespace only)."""
    password = random_password()
    public = SecretDoc(name, "ca", {CA_CERT_KEY: ca.cert_pem(),
                                    "ca.p12": pkcs12_truststore([ca.cert], password),
                                    "ca.password": password.reveal().encode()},
                       cluster=cluster, annotations=cert_annotations(ca))
    key = SecretDoc(ca_key_secret(name), "ca-key", {"ca.key": ca.key_pem()}, cluster=cluster,
                    annotations={FINGERPRINT: f"sha256:{ca.fingerprint_sha256}"})
    return public, key


def scram_doc(cluster: str, principal: str, tenant: str | None, password: SecretValue,
              generation: int = 1) -> SecretDoc:
    user = user_name(principal)
    jaas = f'{SCRAM_MODULE} required username="{user}" password="{password.reveal()}";'
    return SecretDoc(scram_secret(cluster, principal), "scram",
                     {PASSWORD_KEY: password.reveal().encode(), USERNAME_KEY: user.encode(),
                      "sasl.jaas.config": jaas.encode()},
                     tenant=tenant, cluster=cluster,
                     annotations={GENERATION: str(generation), ISSUED_AT: _now()})


def tls_doc(cluster: str, principal: str, tenant: str | None, client_ca: KeyPair, algorithm: str = "ec",
            generation: int = 1) -> SecretDoc:
    user = user_name(principal)
    pair = issue_cert(client_ca, user, client=True, days=CLIENT_CERT_DAYS, algorithm=algorithm)
    password = random_password()
    return SecretDoc(tls_secret(cluster, principal), "tls",
                     {CA_CERT_KEY: client_ca.cert_pem(), "user.crt": pair.cert_pem(), "user.key": pair.key_pem(),
                      "user.p12": pkcs12_keystore(pair, [client_ca.cert], password, user),
                      "user.password": password.reveal().encode()},
                     tenant=tenant, cluster=cluster, annotations=cert_annotations(pair, generation))


def load_ca(store: SecretStore, name: str, alias: str) -> KeyPair | None:
    """A CA with its key from the store, None when absent; a certificate without its key is an error."""
    cert = store.get_bytes(name, CA_CERT_KEY)
    key = store.get_bytes(ca_key_secret(name), "ca.key")
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise RuntimeFailure(f"cluster {alias}: CA secret {name!r} has {'no certificate' if cert is None else 'no key'}"
                             f" (expected {name}/{CA_CERT_KEY} and {ca_key_secret(name)}/ca.key); client "
                             "certificates need both")
    private_key = serialization.load_pem_private_key(key, password=None)
    if not isinstance(private_key, PrivateKey):  # what issue_cert signs with (an Ed25519 key cannot take SHA-256)
        raise RuntimeFailure(f"cluster {alias}: CA key {ca_key_secret(name)}/ca.key is {type(private_key).__name__}; "
                             "client certificates are signed with an EC or RSA key")
    return KeyPair(private_key, load_cert_pem(cert))


def issue_missing(state: DesiredState, clusters: dict[str, Cluster], store: SecretStore,
                  algorithm: str = "ec") -> list[Issued]:
    issued: list[Issued] = []
    client_cas: dict[str, KeyPair] = {}
    distributed: set[str] = set()
    for alias, cluster in sorted(clusters.items()):
        security = cluster.security
        names = [security.ca_secret] if security.protocol.endswith("SSL") and security.ca_secret else []
        names += [security.client_ca_secret] if security.client_ca_secret else []
        for name in names:
            if name in client_cas or name in distributed:
                continue
            existing = store.data(name)
            if existing and CA_CERT_KEY in existing:  # imported or issued before: make sure every reader has it
                cert = load_cert_pem(existing[CA_CERT_KEY])
                annotations = {FINGERPRINT: f"sha256:{cert.fingerprint(hashes.SHA256()).hex()}",
                               NOT_AFTER: cert.not_valid_after_utc.isoformat()}
                store.write(SecretDoc(name, "ca", existing, cluster=alias,
                                      annotations={**(store.annotations(name) or {}), **annotations}))
                distributed.add(name)
                continue
            ca = new_ca(f"mm2gov {alias} {'clients' if name == security.client_ca_secret else 'cluster'} CA",
                        algorithm=algorithm)
            public, key = ca_docs(name, ca, alias)
            store.write(key)  # the key first: a public part without its key would pass for an imported CA
            store.write(public)
            client_cas[name] = ca
            issued.append(Issued(name, "ca", ca.fingerprint_sha256, ca.cert.not_valid_after_utc.isoformat()))
        if security.client_ca_secret and client_cas.get(security.client_ca_secret) is None:
            client_ca = load_ca(store, security.client_ca_secret, alias)
            if client_ca is None:  # the loop above found its certificate, or issued it
                raise RuntimeFailure(f"cluster {alias}: clients CA {security.client_ca_secret!r} is missing")
            client_cas[security.client_ca_secret] = client_ca
    for alias, principals in sorted(state.scram_users().items()):
        client_ca_name = clusters[alias].security.client_ca_secret
        for principal in sorted(principals):
            tenant = state.principal_tenants.get(principal)
            if store.get_bytes(scram_secret(alias, principal), PASSWORD_KEY) is None:
                doc = scram_doc(alias, principal, tenant, random_password())
                store.write(doc)
                issued.append(Issued(doc.name, "scram"))
            if client_ca_name and store.get_bytes(tls_secret(alias, principal), "user.crt") is None:
                doc = tls_doc(alias, principal, tenant, client_cas[client_ca_name], algorithm)
                store.write(doc)
                issued.append(Issued(doc.name, "tls", doc.annotations[FINGERPRINT][7:], doc.annotations[NOT_AFTER]))
    return issued
