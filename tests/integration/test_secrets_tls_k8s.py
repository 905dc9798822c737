"""Issue 5 on the real stack: client certificates on the brokers' mTLS listener, Kubernetes Secrets
in per-tenant namespaces read back under the tenant's own RBAC, and certificate expiry in drift.

Tenants here are this module's own (cert-*, k8s-*); the brokers and kube-apiserver are shared.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import uuid

import pytest
import yaml
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from devstack import tools
from devstack.repo import as_yaml, tenant_document, write_stack_repo
from governance.kafka.admin import admin_client, create_topics
from governance.kafka.records import Record, produce, read
from governance.secrets.pki import issue_cert, new_ca
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)


@pytest.fixture(scope="module")
def certified(stack, tmp_path_factory):
    """A repo whose clusters have a clients CA (the stack's), issued and applied."""
    root = tmp_path_factory.mktemp("certified")
    repo, store = root / "repo", root / "store"
    write_stack_repo(stack, repo, ["cert-a"], client_ca=True)
    stack.export_secret_store(store)
    issued = run_cli("secrets", "issue", str(repo), "--to", f"dir:{store}", "--format", "json")
    assert issued.returncode == 0, issued.stderr
    applied = run_cli("apply", str(repo), "--secrets-dir", str(store))
    assert applied.returncode == 0, applied.stderr
    source = stack.kafka["source"]
    create_topics(admin_client(source.admin_config()), ["cert-a.events"])
    produce(source.admin_config(), "cert-a.events", [Record(b"k", b"by-cert")])
    return {"repo": repo, "store": store, "issued": json.loads(issued.stdout)["issued"]}


def mtls_config(stack, **tls) -> dict:
    return {"bootstrap.servers": stack.kafka["source"].mtls_bootstrap_servers, "security.protocol": "SSL",
            "ssl.ca.location": str(stack.ca_pem_path), "ssl.endpoint.identification.algorithm": "https", **tls}


def test_client_certificates_are_issued_with_stores_java_reads(certified):
    tls = {i["secret"]: i for i in certified["issued"] if i["kind"] == "tls"}
    assert set(tls) >= {"tls-source-cert-a-app", "tls-target-cert-a-app", "tls-source-mm2-cert--a-source-to-target"}
    assert all(len(i["fingerprint"]) == 64 and i["not_after"] for i in tls.values())
    folder = certified["store"] / "tls-source-cert-a-app"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
        "ca.crt", "user.crt", "user.key", "user.p12", "user.password"]
    listing = subprocess.run([str(tools.java().parent / "keytool"), "-list", "-storetype", "PKCS12", "-keystore",
                              str(folder / "user.p12"), "-storepass", (folder / "user.password").read_text()],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "PrivateKeyEntry" in listing.stdout, listing.stdout + listing.stderr


def test_mtls_listener_accepts_the_issued_keystore(stack, certified):
    folder = certified["store"] / "tls-source-cert-a-app"
    config = mtls_config(stack, **{"ssl.keystore.location": str(folder / "user.p12"),
                                   "ssl.keystore.password": (folder / "user.password").read_text()})
    result = read(config, "cert-a.events", 1, timeout=60, group="cert-a-check")
    assert result.error is None and [r.value for r in result.records] == [b"by-cert"]
    refused = read(config, "target-only.topic", 1, timeout=15, group="cert-a-check2")
    assert refused.error is not None  # the certificate's principal has no ACL there


def test_mtls_listener_refuses_a_certificate_from_another_ca(stack, tmp_path):
    stranger_ca = new_ca("someone else's CA")
    stranger = issue_cert(stranger_ca, "cert-a-app", client=True)
    (tmp_path / "user.crt").write_bytes(stranger.cert_pem())
    (tmp_path / "user.key").write_bytes(stranger.key_pem())
    config = mtls_config(stack, **{"ssl.certificate.location": str(tmp_path / "user.crt"),
                                   "ssl.key.location": str(tmp_path / "user.key"), "log_level": 0})
    with pytest.raises(KafkaException):
        AdminClient(config).list_topics(timeout=10)
    no_cert = mtls_config(stack, log_level=0)
    with pytest.raises(KafkaException):
        AdminClient(no_cert).list_topics(timeout=10)


def test_drift_reports_client_certificates_expiring_or_missing(certified):
    clean = run_cli("drift", str(certified["repo"]), "--secrets-dir", str(certified["store"]), "--format", "json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    certificates = json.loads(clean.stdout)["certificates"]
    assert {c["status"] for c in certificates} == {"ok"} and len(certificates) >= 5
    warned = run_cli("drift", str(certified["repo"]), "--secrets-dir", str(certified["store"]),
                     "--warn-days", "400")  # every client certificate lives 365 days
    assert warned.returncode == 1
    assert "! expiring tls-source-cert-a-app/user.crt, not after " in warned.stdout


K8S_TENANTS = ("k8s-alpha", "k8s-beta")


@pytest.fixture(scope="module")
def in_kube(stack, tmp_path_factory):
    """Two tenants' secrets issued into the stack's kube-apiserver, RBAC from k8s/ applied."""
    from kubernetes import client, utils
    from kubernetes.client.exceptions import ApiException

    root = tmp_path_factory.mktemp("in-kube")
    repo, admin_store, out = root / "repo", root / "admin", root / "out"
    write_stack_repo(stack, repo, K8S_TENANTS, strimzi_namespaces={"target": "kafka-target"})
    (repo / "tenants" / "k8s-beta.yaml").write_text(as_yaml({**tenant_document("k8s-beta"), "namespace": "lob-beta"}))
    kubeconfig = stack.write_kubeconfig(root / "kubeconfig")
    stack.export_secret_store(admin_store)
    generated = run_cli("generate", str(repo), "--out", str(out))
    assert generated.returncode == 0, generated.stderr
    api = stack.kube.client()
    for manifest in sorted((out / "k8s" / "tenants").glob("*.yaml")):
        utils.create_from_yaml(api, yaml_objects=list(yaml.safe_load_all(manifest.read_text())))
    # the brokers' CA, imported as an operator would (kubectl create secret generic devstack-ca --from-file=ca.crt)
    core = client.CoreV1Api(api)
    try:
        core.create_namespace({"metadata": {"name": "mm2gov-system"}})
    except ApiException as exc:
        assert exc.status == 409  # another module made it
    ca_pem = base64.b64encode(stack.ca_pem_path.read_bytes()).decode()
    core.create_namespaced_secret("mm2gov-system", {"metadata": {"name": "devstack-ca"}, "data": {"ca.crt": ca_pem}})
    issued = run_cli("secrets", "issue", str(repo), "--to", "k8s", "--kubeconfig", str(kubeconfig),
                     "--format", "json")
    assert issued.returncode == 0, issued.stderr
    return {"repo": repo, "api": api, "issued": json.loads(issued.stdout)["issued"], "kubeconfig": kubeconfig,
            "admin_store": admin_store}


def test_secrets_land_in_the_readers_namespaces_typed_labelled_and_annotated(in_kube):
    from kubernetes import client

    core = client.CoreV1Api(in_kube["api"])
    alpha = core.read_namespaced_secret("scram-source-k8s-alpha-app", "k8s-alpha")
    assert alpha.type == "Opaque"
    assert alpha.metadata.labels == {"app.kubernetes.io/managed-by": "mm2gov", "mm2gov.io/kind": "scram",
                                     "mm2gov.io/tenant": "k8s-alpha", "mm2gov.io/cluster": "source"}
    assert alpha.metadata.annotations["mm2gov.io/generation"] == "1"
    password = base64.b64decode(alpha.data["password"]).decode()
    assert len(password) >= 43 and 'password="' + password in base64.b64decode(alpha.data["sasl.jaas.config"]).decode()
    assert not any(password in value for value in alpha.metadata.annotations.values())
    # the KafkaUser on target lives in kafka-target: its secret is there too; beta's namespace is its own
    assert core.read_namespaced_secret("scram-target-k8s-alpha-app", "kafka-target").data["password"]
    assert core.read_namespaced_secret("scram-source-k8s-beta-app", "lob-beta").metadata.labels[
        "mm2gov.io/tenant"] == "k8s-beta"
    # the CA: its certificate beside every credential, its key only in the system namespace
    ca = core.read_namespaced_secret("devstack-ca", "k8s-alpha")
    assert set(ca.data) == {"ca.crt"}  # imported from the stack, public part only
    names = {s.metadata.name for s in core.list_namespaced_secret("k8s-alpha").items}
    assert not any(name.endswith("-key") for name in names)
    assert not any(name.startswith("scram-") and "beta" in name for name in names)


def test_issue_to_k8s_twice_keeps_existing_secrets(in_kube):
    again = run_cli("secrets", "issue", str(in_kube["repo"]), "--to", "k8s", "--kubeconfig",
                    str(in_kube["kubeconfig"]))
    assert again.returncode == 0 and again.stdout.strip().endswith("0 secret(s) issued into Kubernetes Secrets")


def service_account_client(stack, api, namespace: str):
    """A client authenticated as `namespace`'s kafka-client ServiceAccount (a real TokenRequest)."""
    from kubernetes import client

    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[],
                                                                                 expiration_seconds=600))
    token = client.CoreV1Api(api).create_namespaced_service_account_token("kafka-client", namespace, request)
    configuration = client.Configuration()
    configuration.host = stack.kube.url
    configuration.ssl_ca_cert = str(stack.ca_pem_path)
    configuration.api_key = {"authorization": f"Bearer {token.status.token}"}
    return client.CoreV1Api(client.ApiClient(configuration))


def test_a_tenant_service_account_reads_only_its_own_namespace(stack, in_kube):
    from kubernetes.client.exceptions import ApiException

    alpha = service_account_client(stack, in_kube["api"], "k8s-alpha")
    own = alpha.read_namespaced_secret("scram-source-k8s-alpha-app", "k8s-alpha")
    assert own.metadata.name == "scram-source-k8s-alpha-app"
    for namespace, name in (("lob-beta", "scram-source-k8s-beta-app"), ("kafka-target", "scram-target-k8s-alpha-app"),
                            ("mm2gov-system", "devstack-ca")):
        with pytest.raises(ApiException) as refused:
            alpha.read_namespaced_secret(name, namespace)
        assert refused.value.status == 403
    beta = service_account_client(stack, in_kube["api"], "lob-beta")
    with pytest.raises(ApiException) as refused:
        beta.list_namespaced_secret("k8s-alpha")
    assert refused.value.status == 403


def test_a_tenant_reads_only_the_secrets_placed_for_it_even_in_its_own_namespace(stack, in_kube):
    """The Role names the Secrets mm2gov places for the tenant: anything else that lands in the
    namespace (another team's Secret, a service account token) stays unreadable, and so does the list."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    admin = client.CoreV1Api(in_kube["api"])
    admin.create_namespaced_secret("k8s-alpha", {"metadata": {"name": "someone-elses"}, "stringData": {"k": "v"}})
    alpha = service_account_client(stack, in_kube["api"], "k8s-alpha")
    assert alpha.read_namespaced_secret("scram-source-k8s-alpha-app", "k8s-alpha").metadata.name
    for call in (lambda: alpha.read_namespaced_secret("someone-elses", "k8s-alpha"),
                 lambda: alpha.list_namespaced_secret("k8s-alpha")):
        with pytest.raises(ApiException) as refused:
            call()
        assert refused.value.status == 403


def test_k8s_store_with_a_dead_apiserver_is_one_clear_error(in_kube, tmp_path):
    config = yaml.safe_load(in_kube["kubeconfig"].read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    dead = tmp_path / "kubeconfig"
    dead.write_text(yaml.safe_dump(config))
    done = run_cli("secrets", "issue", str(in_kube["repo"]), "--to", "k8s", "--kubeconfig", str(dead))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("error: kubernetes: cannot read secret ") and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("API server unreachable (MaxRetryError)")


def test_dir_store_files_are_private(certified):
    store = DirSecretStore(certified["store"])
    assert store.annotations("tls-source-cert-a-app")["mm2gov.io/fingerprint"].startswith("sha256:")
    modes = {oct(p.stat().st_mode & 0o777) for p in certified["store"].rglob("*") if p.is_file()}
    assert modes == {"0o600"}


def test_a_secret_one_namespace_refused_is_written_everywhere_on_the_next_run(stack, in_kube, tmp_path):
    """A credential read from several namespaces (the tenant's, and the Strimzi namespace of its cluster) is
    written to all of them, the one it is read back from last. When one namespace refuses it (here a
    ValidatingAdmissionPolicy denying SCRAM Secrets there, as an organisation's policy may; the CA's copy,
    written before, is let through so that a credential is what fails), `issue` stops with
    exit 3, and the next run, the policy gone, writes the copy that was missing: the read-back copy did not
    claim a complete set (before, it was written first, and the next run took the secret for issued and
    never wrote the missing copy)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    suffix = uuid.uuid4().hex[:5]
    tenant, strimzi, policy = f"k8s-g{suffix}", f"kafka-g{suffix}", f"no-secrets-{suffix}"
    repo = tmp_path / "repo"
    write_stack_repo(stack, repo, [tenant], strimzi_namespaces={"target": strimzi})
    core, admission = client.CoreV1Api(in_kube["api"]), client.AdmissionregistrationV1Api(in_kube["api"])
    core.create_namespace({"metadata": {"name": strimzi}})
    admission.create_validating_admission_policy({
        "metadata": {"name": policy},
        "spec": {"failurePolicy": "Fail", "validations": [{"expression": "!object.metadata.name.startsWith('scram-')",
                                                    "message": "no SCRAM Secrets here"}],
                 "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["CREATE", "UPDATE"],
                                                         "resources": ["secrets"]}]}}})
    admission.create_validating_admission_policy_binding({
        "metadata": {"name": policy},
        "spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": strimzi}}}}})
    probe = {"metadata": {"name": "scram-probe"}, "data": {}}
    deadline = time.monotonic() + 60
    while True:  # the apiserver applies a new policy within seconds: wait until it refuses a dry-run Secret
        try:
            core.create_namespaced_secret(strimzi, probe, dry_run="All")
        except ApiException as exc:
            assert exc.status in (403, 422), exc
            break
        assert time.monotonic() < deadline, "the admission policy never took effect"
        time.sleep(0.2)
    args = ["secrets", "issue", str(repo), "--to", "k8s", "--kubeconfig", str(in_kube["kubeconfig"])]

    refused = run_cli(*args)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert f"error: kubernetes: cannot write secret {strimzi}/scram-" in refused.stderr
    assert "Traceback" not in refused.stderr
    name = refused.stderr.split(f"cannot write secret {strimzi}/", 1)[1].split(":", 1)[0]

    admission.delete_validating_admission_policy_binding(policy)
    admission.delete_validating_admission_policy(policy)
    deadline = time.monotonic() + 60
    while True:  # and until it takes Secrets again
        try:
            core.create_namespaced_secret(strimzi, probe, dry_run="All")
            break
        except ApiException:
            assert time.monotonic() < deadline, "the admission policy never went away"
            time.sleep(0.2)
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    copies = {s.metadata.namespace: s.data["password"]
              for s in core.list_secret_for_all_namespaces(field_selector=f"metadata.name={name}").items}
    namespaces, same = sorted(copies), len(set(copies.values())) == 1  # never a value in the assertion's text
    assert strimzi in namespaces and len(namespaces) >= 2 and same, namespaces
