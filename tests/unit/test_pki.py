import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID

from devstack import tools
from governance.secrets.pki import issue_cert, new_ca, pkcs12_keystore, pkcs12_truststore
from governance.secrets.values import SecretValue


@pytest.fixture(scope="module")
def ca():
    return new_ca("test CA")


def test_server_certificate_is_signed_by_ca_for_loopback(ca):
    leaf = issue_cert(ca, "kafka", server=True, ip_addresses=("127.0.0.1",), dns_names=("localhost",))
    leaf.cert.verify_directly_issued_by(ca.cert)
    sans = leaf.cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    usages = leaf.cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_certificate_of_another_ca_does_not_verify(ca):
    other = new_ca("other CA")
    leaf = issue_cert(other, "intruder", client=True)
    with pytest.raises((ValueError, Exception)):
        leaf.cert.verify_directly_issued_by(ca.cert)


def test_rsa_below_2048_is_refused(ca):
    with pytest.raises(ValueError):
        issue_cert(ca, "weak", client=True, algorithm="rsa1024")


def test_keystore_round_trips_with_its_password(ca):
    leaf = issue_cert(ca, "client", client=True)
    data = pkcs12_keystore(leaf, [ca.cert], SecretValue("store-pw"), "client")
    key, cert, extra = pkcs12.load_key_and_certificates(data, b"store-pw")
    assert cert == leaf.cert and extra == [ca.cert] and key is not None


def _keytool() -> str:
    return str(tools.java().parent / "keytool")


def test_java_sees_one_trusted_entry_in_the_truststore(ca, tmp_path):
    path = tmp_path / "truststore.p12"
    path.write_bytes(pkcs12_truststore([ca.cert], SecretValue("trust-pw")))
    listing = subprocess.run([_keytool(), "-list", "-storetype", "PKCS12", "-keystore", str(path),
                              "-storepass", "trust-pw"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert "contains 1 entry" in listing.stdout
    assert "trustedCertEntry" in listing.stdout
