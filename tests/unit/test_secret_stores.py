"""Secret docs, the directory store, placement, expiry and scrubbing: the pure parts of issue 5."""

from __future__ import annotations

import datetime as dt
import logging
import stat

from governance.compile.desired import DesiredState
from governance.compile.mm2 import Mm2Flow
from governance.config.schema import Cluster
from governance.model.acl import AclBinding
from governance.secrets.expiry import status_of
from governance.secrets.issue import scram_doc
from governance.secrets.pki import issue_cert, new_ca
from governance.secrets.placement import placement
from governance.secrets.scrub import REDACTED, ScrubFilter, scrub
from governance.secrets.store import DirSecretStore, SecretDoc
from governance.secrets.values import SecretValue


def test_a_secret_doc_never_shows_its_data():
    doc = scram_doc("cloud", "User:payments-app", "payments", SecretValue("s3cret-value-123"))
    assert "s3cret-value-123" not in repr(doc) and "s3cret-value-123" not in str(doc)
    assert doc.data["sasl.jaas.config"].decode().endswith('username="payments-app" password="s3cret-value-123";')
    assert doc.labels() == {"app.kubernetes.io/managed-by": "mm2gov", "mm2gov.io/kind": "scram",
                            "mm2gov.io/tenant": "payments", "mm2gov.io/cluster": "cloud"}


def test_dir_store_replaces_a_secret_whole_with_private_files(tmp_path):
    store = DirSecretStore(tmp_path)
    store.write(SecretDoc("s", "scram", {"password": b"one", "old": b"x"}, annotations={"a": "1"}))
    store.write(SecretDoc("s", "scram", {"password": b"two"}, annotations={"a": "2"}))
    assert store.data("s") == {"password": b"two"} and store.annotations("s") == {"a": "2"}
    assert store.get("s", "password").reveal() == "two" and store.data("missing") is None
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "s").iterdir()} == {0o600}
    store.delete("s")
    assert store.annotations("s") is None


def _cluster(strimzi_ns: str | None = None, client_ca: bool = False) -> Cluster:
    security = {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": "ca"}
    if client_ca:
        security["client_ca_secret"] = "clients-ca"
    data = {"bootstrap_servers": "x:1", "zone": "z", "security": security}
    if strimzi_ns:
        data["strimzi"] = {"namespace": strimzi_ns, "cluster": "k"}
    return Cluster.model_validate(data)


def test_placement_puts_credentials_beside_their_readers_only():
    binding = AclBinding("User:pay-app", "TOPIC", "pay.", "PREFIXED", "READ")
    mm2 = AclBinding("User:mm2-pay-onprem-to-cloud", "TOPIC", "pay.", "PREFIXED", "READ")
    state = DesiredState(bindings={"onprem": {binding, mm2}, "cloud": {binding}}, flows=[
        Mm2Flow("pay-onprem-to-cloud", "pay", "onprem", "cloud", lambda: "")], strimzi=[], monitoring={}, header="",
        principal_tenants={"User:pay-app": "pay", "User:mm2-pay-onprem-to-cloud": "pay"},
        tenant_namespaces={"pay": "lob-pay"})
    where = placement(state, {"onprem": _cluster(client_ca=True), "cloud": _cluster("kafka-cloud")})
    assert where.namespaces("scram-onprem-pay-app") == ("lob-pay",)
    assert where.namespaces("tls-onprem-pay-app") == ("lob-pay",)
    assert where.namespaces("scram-cloud-pay-app") == ("lob-pay", "kafka-cloud")
    # MM2's source credentials also go where its KafkaMirrorMaker2 runs (the target's Strimzi namespace)
    assert where.namespaces("scram-onprem-mm2-pay-onprem-to-cloud") == ("lob-pay", "kafka-cloud")
    assert where.namespaces("ca") == ("mm2gov-system", "lob-pay", "kafka-cloud")
    assert where.namespaces("ca-key") == ("mm2gov-system",) and where.namespaces("cloud-admin") == ("mm2gov-system",)


def test_certificate_status_warns_within_the_window_and_flags_expired():
    ca = new_ca("test CA")
    pem = issue_cert(ca, "app", client=True, days=20).cert_pem()
    now = dt.datetime.now(dt.UTC)
    assert status_of("s", "user.crt", pem, now).status == "expiring"
    assert status_of("s", "user.crt", pem, now, warn_days=10).status == "ok"
    assert status_of("s", "user.crt", pem, now + dt.timedelta(days=21)).status == "expired"
    assert status_of("s", "user.crt", None, now).status == "missing"


def test_scrub_removes_every_known_value_from_text_and_log_records(caplog):
    value = SecretValue("canary-4f8a9e0b1c")
    assert scrub(f"SASL authentication failed for password={value.reveal()}") == \
        f"SASL authentication failed for password={REDACTED}"
    record = logging.LogRecord("t", logging.ERROR, __file__, 1, "librdkafka said %s", (value.reveal(),), None)
    ScrubFilter().filter(record)
    assert record.getMessage() == f"librdkafka said {REDACTED}"
