"""Every generated file comes from a serializer (issue 24, class 2): text from outside the tenant files (the
repo folder's name) and names YAML 1.1 reads as other types cannot add a key, a document or an appender,
or change a value's type. `mm2gov generate` runs on examples/acme copied under hostile folder names and
with tenants renamed to YAML 1.1 scalars, and every file it writes is parsed back. The hostile-folder runs
go through the CLI's own main() in this process (tests/tools/in_process.py): ten interpreter starts would
cost more than the generating; the last test runs `mm2gov generate` as its own process."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import javaproperties
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.compile.desired import shown_name
from governance.compile.k8s_tenants import tenant_manifests
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.in_process import run_in_process

ACME = REPO_ROOT / "examples" / "acme"
HOSTILE_FOLDERS = ["repo\n---\nkind: Secret", "repo\nappender.evil.type = File", "${jndi:ldap://x/a}",
                   "repo # comment", "repo\u2028next", "repo\u0085next", "r\u00e9po: {a: b}", "- item"]
YAML11_NAMES = ["0123", "yes", "no", "on", "off", "null", "true", "1e3", "0x1f", "123"]


def parsed(out: Path,
           read_properties: Callable[[dict[str, str]], dict[str, object]] | None = None) -> dict[str, object]:
    """Every generated file as data: YAML documents, JSON, .properties (java.util.Properties' reading: the
    javaproperties library here, or `read_properties`, given every properties file's text at once)."""
    found: dict[str, object] = {}
    properties: dict[str, str] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        relative, text = path.relative_to(out).as_posix(), path.read_text(encoding="utf-8")
        if path.suffix in (".yaml", ".yml"):
            found[relative] = list(yaml.safe_load_all(text))
        elif path.suffix == ".json":
            found[relative] = json.loads(text)
        elif path.suffix == ".properties":
            properties[relative] = text
        else:
            found[relative] = text
    if read_properties is None:
        found.update({name: javaproperties.loads(text) for name, text in properties.items()})
    else:
        found.update(read_properties(properties))
    return found


def without_headers(data: object) -> object:
    """The data with the generated-by text (the one place the folder's name is) taken out."""
    if isinstance(data, dict):
        return {k: without_headers(v) for k, v in data.items() if k not in ("generated", "__generated")}
    if isinstance(data, list):
        return [without_headers(v) for v in data]
    return data


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("clean")
    shutil.copytree(ACME, root / "acme")
    done = run_in_process("generate", str(root / "acme"), "--out", str(root / "out"))
    assert done.returncode == 0, done.stderr
    return parsed(root / "out")


@pytest.mark.parametrize("folder", HOSTILE_FOLDERS)
def test_a_hostile_folder_name_changes_no_generated_file_but_its_header(clean, tmp_path, folder):
    repo = tmp_path / folder
    shutil.copytree(ACME, repo)
    done = run_in_process("generate", str(repo), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    files = parsed(tmp_path / "out")
    assert without_headers(files) == without_headers(clean)  # no key, document or appender added
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "${jndi" not in text and "\u2028" not in text and "\u0085" not in text, path
            assert not re.search(r"^(kind: Secret|appender\.evil)", text, re.MULTILINE), path


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40))
def test_shown_names_hold_no_line_break_lookup_or_comment(text):
    shown = shown_name(text)
    assert re.fullmatch(r"[A-Za-z0-9._/\\-]*", shown), shown
    assert "${" not in shown


@pytest.mark.parametrize("name", YAML11_NAMES)
def test_a_tenant_named_like_a_yaml_11_scalar_stays_a_string(name):
    [render] = tenant_manifests({name: name}, {name: [f"scram-onprem-{name}-app"]}, "# header").values()
    documents = list(yaml.safe_load_all(render()))
    assert [d["kind"] for d in documents] == ["Namespace", "ServiceAccount", "Role", "RoleBinding"]
    assert documents[0]["metadata"]["name"] == name
    assert all(d["metadata"]["labels"]["mm2gov.io/tenant"] == name for d in documents)
    assert all(d["metadata"].get("namespace", name) == name for d in documents)
    assert documents[2]["rules"][0]["resourceNames"] == [f"scram-onprem-{name}-app"]


def test_a_yaml_11_tenant_generates_and_validates(tmp_path):
    """Through the whole CLI: a tenant named `yes` in the repo, its namespace manifest read back as a string."""
    repo = tmp_path / "repo"
    shutil.copytree(ACME, repo)
    hr = (repo / "tenants" / "hr.yaml").read_text()
    (repo / "tenants" / "hr.yaml").unlink()
    (repo / "tenants" / "yes.yaml").write_text(hr.replace("name: hr", "name: \"yes\"", 1).replace("hr.", "yes.")
                                               .replace("hr-", "yes-"))
    done = run_cli("generate", str(repo), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    documents = list(yaml.safe_load_all((tmp_path / "out" / "k8s" / "tenants" / "yes.yaml").read_text()))
    assert documents[0]["metadata"]["name"] == "yes"


def test_an_unknown_placeholder_in_the_template_is_an_error_not_text(monkeypatch, tmp_path):
    from governance.compile import k8s_tenants
    from governance.errors import ConfigError

    template = tmp_path / "rbac.yaml"
    template.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE}\n  uid: ${UID}\n")
    monkeypatch.setattr(k8s_tenants, "TEMPLATE", template)
    with pytest.raises(ConfigError, match=r"unknown placeholder \$\{UID\}"):
        tenant_manifests({"hr": "hr"}, {}, "# header")


def test_a_template_generate_cannot_fill_writes_nothing(monkeypatch, tmp_path):
    """Files are rendered as they are written (in generate's workers): what would make a rendering fail is found
    while planning, before the first file is written."""
    from governance.cli import _desired_state
    from governance.compile import k8s_tenants
    from governance.compile.write import write_outputs
    from governance.errors import ConfigError

    template = tmp_path / "rbac.yaml"
    template.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE}\n  uid: ${UID}\n")
    monkeypatch.setattr(k8s_tenants, "TEMPLATE", template)
    _, state = _desired_state(ACME, None, "/etc/mm2gov/secrets")
    with pytest.raises(ConfigError, match=r"unknown placeholder \$\{UID\}"):
        write_outputs(state, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_topics_whose_names_fold_alike_each_keep_their_kafka_topic(tmp_path):
    """Issue 24, class 3: the old KafkaTopic name of `onprem.Payments.x` was `onprem.payments.x-<8 hex>`, which a
    topic may be named, so one KafkaTopic file replaced the other and a topic silently lost its object. Each
    exact topic below (one upper-case, one named like the old encoding's hashed form and one ending like the new
    one's) keeps its own."""
    import hashlib

    from governance.model.names import literal_regex

    old_hashed = "payments.x-" + hashlib.sha256(b"onprem.Payments.x").hexdigest()[:8]
    new_hashed = "payments.x.h" + hashlib.sha256(b"onprem.Payments.x").hexdigest()[:20]  # ends like a hashed one
    repo = tmp_path / "repo"
    shutil.copytree(ACME, repo)
    payments = yaml.safe_load((repo / "tenants" / "payments.yaml").read_text())
    payments["topic_prefixes"].append("Payments.")
    payments["flows"][0]["topics"] += [literal_regex(t) for t in ("Payments.x", old_hashed, new_hashed)]
    (repo / "tenants" / "payments.yaml").write_text(yaml.safe_dump(payments))
    done = run_in_process("generate", str(repo), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    topics = {}
    for path in (tmp_path / "out" / "strimzi").glob("kafkatopic*.yaml"):
        [obj] = yaml.safe_load_all(path.read_text())
        topics[obj["spec"]["topicName"]] = obj["metadata"]["name"]
    wanted = {"onprem.Payments.x", f"onprem.{old_hashed}", f"onprem.{new_hashed}"}
    assert wanted <= set(topics), sorted(topics)
    assert len({topics[t] for t in wanted}) == 3


@pytest.mark.parametrize("link", ["strimzi", "acls/cloud.json", "k8s/tenants"])
def test_generate_never_writes_or_deletes_through_a_link_under_out(tmp_path, link):
    """A link committed into a repo that holds generated files (OUT/strimzi -> ~) would make generate write there,
    and its removal of stale files delete there: refused, exit 2, the outside untouched, nothing written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.yaml").write_text("keep me\n")
    out = tmp_path / "out"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(outside if "." not in link else outside / "precious.yaml")
    done = run_in_process("generate", str(ACME), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert f"{link} in {out} is a symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert [p.name for p in outside.iterdir()] == ["precious.yaml"]
    assert (outside / "precious.yaml").read_text() == "keep me\n"
    assert not (out / "mm2").exists()


def test_two_outputs_of_one_path_write_nothing(tmp_path):
    from dataclasses import replace

    from governance.cli import _desired_state
    from governance.compile.write import write_outputs
    from governance.errors import ConfigError

    _, state = _desired_state(ACME, None, "/etc/mm2gov/secrets")  # what `generate` writes for acme
    twice = replace(state, strimzi=[*state.strimzi, {**state.strimzi[0], "spec": {"changed": True}}])
    with pytest.raises(ConfigError, match=r"two outputs would both be strimzi/kafka"):
        write_outputs(twice, tmp_path / "second")
    assert not (tmp_path / "second").exists()


# Principal names are the tenant text with the widest alphabet that reaches generated files (anything but blanks:
# the schema's `User:\S+`); on clusters Strimzi does not manage they need not be Kubernetes names.
HOSTILE_PARTS = [*"aZ09.-_\"'\\#:=${}[]|&*!?,;<>/@%`~^()", "---", "${jndi:", "\u00e9", "\u2603", "yes", "null"]
HOSTILE_USER = st.lists(st.sampled_from(HOSTILE_PARTS), min_size=1, max_size=8).map("".join)
SMALL_REPO = {
    "clusters.yaml": {"clusters": {
        alias: {"bootstrap_servers": f"127.0.0.1:{port}", "zone": "onprem",
                "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": f"{alias}-ca"}}
        for alias, port in (("onprem", 19093), ("dr", 29093))}},
    "tenants/payments.yaml": {
        "name": "payments", "owners": ["o@example.com"], "classification": "internal",
        "topic_prefixes": ["payments."], "group_prefixes": ["payments-"],
        "flows": [{"source": "onprem", "target": "dr", "topics": ["payments\\..*"], "groups": ["payments-.*"]}]},
}


def test_any_principal_name_the_schema_allows_reaches_every_file_as_data(tmp_path_factory):
    """Class 2: a principal named with quotes, backslashes, `#`, `---`, `${jndi:`, `=`/`:` or non-ASCII either is
    refused by the policy or reaches the ACL files, the MM2 files and every other output as itself: each file
    parses back, the ACL bindings name exactly the declared principal, and a log4j2 file holds no lookup but
    mm2gov's own. The property runs inside the test, which then checks it was not vacuous: most of its names
    were generated, not refused (in any test order)."""
    outcomes = {"generated": 0, "refused": 0}

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(user=HOSTILE_USER)
    def hostile_principals_reach_every_file_as_data(user):
        root = tmp_path_factory.mktemp("hostile-user")
        principal = f"User:{user}"
        for relative, data in SMALL_REPO.items():
            if relative.startswith("tenants/"):
                data = {**data, "principals": [{"name": principal, "access": ["read", "write"]}]}
            (root / "repo" / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / "repo" / relative).write_text(yaml.safe_dump(data))
        done = run_in_process("generate", str(root / "repo"), "--out", str(root / "out"))
        if done.returncode != 0:  # refused (exit 1, a policy violation, or 2) with one message and no traceback
            assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
            outcomes["refused"] += 1
            return
        outcomes["generated"] += 1
        files = parsed(root / "out")
        declared = {b["principal"] for name, doc in files.items() if name.startswith("acls/") for b in doc["bindings"]}
        assert principal in declared and declared <= {principal, "User:mm2-payments-onprem-to-dr"}, declared
        for name, doc in files.items():
            if name.startswith("mm2/logging/"):  # its only lookups are mm2gov's own log folder
                lookups = set(re.findall(r"\$\{[^}]*\}", json.dumps(doc)))
                assert lookups <= {"${sys:mm2gov.log.dir:-/var/log/mm2gov}"}, doc

    hostile_principals_reach_every_file_as_data()
    assert outcomes["generated"] >= 6, outcomes

