"""`mm2gov secrets issue --to dir:PATH`: CAs and SCRAM credentials that real brokers and Java accept."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

from devstack import tools
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce, read
from governance.secrets.issue import load_ca
from governance.secrets.names import ca_key_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import REPO_ROOT, run_cli, secret_values

TENANT = """\
name: issued
owners: ["issued@example.com"]
classification: internal
topic_prefixes: ["issued."]
group_prefixes: ["issued-"]
principals:
  - {name: "User:issued-app", access: [read, write]}
"""


def test_issue_creates_cas_that_java_reads_and_never_prints_values(tmp_path):
    store = tmp_path / "store"
    done = run_cli("secrets", "issue", str(REPO_ROOT / "examples" / "acme"), "--to", f"dir:{store}",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    issued = json.loads(done.stdout)["issued"]
    cas = sorted(i["secret"] for i in issued if i["kind"] == "ca")
    assert cas == ["cloud-cluster-ca", "dr-cluster-ca", "onprem-cluster-ca"]
    assert any(i["secret"] == "scram-cloud-mm2-payments-onprem-to-cloud" for i in issued)
    values = secret_values(store)
    assert len(values) > 20 and not any(v in done.stdout + done.stderr for v in values)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in store.rglob("*") if p.is_file())
    password = (store / "onprem-cluster-ca" / "ca.password").read_text()
    listing = subprocess.run([str(tools.java().parent / "keytool"), "-list", "-storetype", "PKCS12", "-keystore",
                              str(store / "onprem-cluster-ca" / "ca.p12"), "-storepass", password],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "trustedCertEntry" in listing.stdout
    again = run_cli("secrets", "issue", str(REPO_ROOT / "examples" / "acme"), "--to", f"dir:{store}")
    assert again.returncode == 0 and again.stdout.strip().endswith("0 secret(s) issued into " + str(store))


def test_issued_scram_credentials_work_on_the_real_broker(stack, tmp_path):
    repo, store = tmp_path / "repo", tmp_path / "store"
    (repo / "tenants").mkdir(parents=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    (repo / "tenants" / "issued.yaml").write_text(TENANT)
    stack.export_secret_store(store)  # the brokers' CA is imported, not replaced
    done = run_cli("secrets", "issue", str(repo), "--to", f"dir:{store}")
    assert done.returncode == 0, done.stderr
    assert "+ scram scram-source-issued-app" in done.stdout and " ca " not in done.stdout
    applied = run_cli("apply", str(repo), "--secrets-dir", str(store))
    assert applied.returncode == 0, applied.stderr
    source = stack.kafka["source"]
    create_topics(admin_client(source.admin_config()), ["issued.events"])
    produce(source.admin_config(), "issued.events", [Record(b"k", b"v")])
    secrets = DirSecretStore(store)
    jaas = secrets.get("scram-source-issued-app", "sasl.jaas.config").reveal()
    assert 'username="issued-app"' in jaas
    client = source.client_config("issued-app", secrets.get("scram-source-issued-app", "password"))
    client["ssl.ca.location"] = str(Path(store) / "devstack-ca" / "ca.crt")
    result = read(client, "issued.events", 1, timeout=60, group="issued-check")
    assert result.error is None and [r.value for r in result.records] == [b"v"]


def test_a_ca_whose_key_cannot_be_stored_is_issued_whole_on_the_next_run(tmp_path):
    """A new CA's key is stored before its public part: when the key's write fails (here a file where its
    secret's folder belongs), no public part is left behind to pass for an imported CA on the next run, which
    would keep that certificate and lose its key for good. The next run issues the CA whole."""
    store = tmp_path / "store"
    blocked = store / ca_key_secret("cloud-cluster-ca")
    blocked.parent.mkdir(parents=True)
    blocked.write_text("not a folder")
    first = run_cli("secrets", "issue", str(REPO_ROOT / "examples" / "acme"), "--to", f"dir:{store}")
    assert first.returncode == 3, first.stdout + first.stderr
    assert f"cannot write secret '{ca_key_secret('cloud-cluster-ca')}'" in first.stderr
    assert not (store / "cloud-cluster-ca").exists()

    blocked.unlink()
    again = run_cli("secrets", "issue", str(REPO_ROOT / "examples" / "acme"), "--to", f"dir:{store}")
    assert again.returncode == 0, again.stderr
    ca = load_ca(DirSecretStore(store), "cloud-cluster-ca", "cloud")
    assert ca is not None and ca.cert.public_key().public_numbers() == ca.key.public_key().public_numbers()
