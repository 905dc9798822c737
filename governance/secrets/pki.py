"""Certificates and Java-readable stores, made with `cryptography`.

Used by the local stack now and by `mm2gov secrets` later. EC P-256 keys by
default; Java 17 and librdkafka both speak ECDSA.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from governance.secrets.values import SecretValue

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class KeyPair:
    """A private key with its certificate (and the chain up to, excluding, the root)."""

    key: PrivateKey
    cert: x509.Certificate

    @property
    def fingerprint_sha256(self) -> str:
        return self.cert.fingerprint(hashes.SHA256()).hex()

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def new_private_key(algorithm: str = "ec") -> PrivateKey:
    if algorithm == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    if algorithm.startswith("rsa"):
        bits = int(algorithm[3:] or 2048)
        if bits < 2048:
            raise ValueError("RSA keys must be 2048 bits or more")
        return rsa.generate_private_key(public_exponent=65537, key_size=bits)
    raise ValueError(f"unknown key algorithm {algorithm!r} (ec | rsa2048 | rsa3072 | rsa4096)")


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mm2gov"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def new_ca(common_name: str, days: int = 3650, algorithm: str = "ec") -> KeyPair:
    """A self-signed CA that may sign leaf certificates only (path length 0)."""
    key = new_private_key(algorithm)
    now = dt.datetime.now(dt.UTC)
    name = _name(common_name)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(key, cert)


def issue_cert(
    ca: KeyPair,
    common_name: str,
    *,
    server: bool = False,
    client: bool = False,
    ip_addresses: tuple[str, ...] = (),
    dns_names: tuple[str, ...] = (),
    days: int = 365,
    algorithm: str = "ec",
) -> KeyPair:
    """A leaf certificate signed by `ca`, for TLS server and/or client auth."""
    if not (server or client):
        raise ValueError("a certificate must be for server or client auth (or both)")
    key = new_private_key(algorithm)
    now = dt.datetime.now(dt.UTC)
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
    )
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    sans += [x509.DNSName(name) for name in dns_names]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return KeyPair(key, builder.sign(ca.key, hashes.SHA256()))


STORE_KDF_ROUNDS = 2048


def _store_encryption(password: SecretValue) -> serialization.KeySerializationEncryption:
    """AES-256 with PBKDF2-SHA256 and a SHA-256 MAC, for keystores and truststores alike.

    Key stretching protects guessable passwords; mm2gov's store passwords are 32 random bytes,
    so 2,048 rounds lose nothing. The library's default (BestAvailableEncryption: 20,000 rounds)
    makes a keystore about 5x dearer to write (bench/secrets.py) and every load dearer: each Kafka
    client of a JVM (a MirrorMaker 2 node opens dozens) loads its truststore again, 139 ms on the
    JIT's quick tier with 20,000 rounds against 30 ms with 2,048 (measured 2026-11-27, a 1-CA store).
    """
    return (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(STORE_KDF_ROUNDS)
        .key_cert_algorithm(pkcs12.PBES.PBESv2SHA256AndAES256CBC)
        .hmac_hash(hashes.SHA256())
        .build(password.reveal().encode())
    )


def pkcs12_keystore(pair: KeyPair, chain: list[x509.Certificate], password: SecretValue, alias: str) -> bytes:
    """A PKCS12 keystore (key + cert + chain) that Java and Strimzi read."""
    return pkcs12.serialize_key_and_certificates(alias.encode(), pair.key, pair.cert, chain,
                                                 _store_encryption(password))


def pkcs12_truststore(cas: list[x509.Certificate], password: SecretValue) -> bytes:
    """A PKCS12 truststore Java sees trusted entries in.

    A plain `serialize_key_and_certificates(None, None, None, cas)` file is
    read by Java as having zero entries; the Java truststore form marks each
    certificate as trusted.
    """
    entries = [pkcs12.PKCS12Certificate(ca, f"ca-{i}".encode()) for i, ca in enumerate(cas)]
    return pkcs12.serialize_java_truststore(entries, _store_encryption(password))


def load_cert_pem(data: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(data)
