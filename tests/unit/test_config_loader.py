"""Every config problem names file, line and key; all problems of a repo come together."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.config import load_inventory, loader, yaml_reader
from governance.config.loader import InvalidConfig
from governance.errors import ConfigError
from tests.conftest import REPO_ROOT, run_cli

ACME = REPO_ROOT / "examples" / "acme"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(ACME, target)
    return target


def problems_of(repo: Path) -> list[str]:
    with pytest.raises(InvalidConfig) as invalid:
        load_inventory(repo)
    return [str(p) for p in invalid.value.problems]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_acme_loads_with_locations():
    inventory = load_inventory(ACME)
    assert set(inventory.tenants) == {"payments", "marketing", "risk", "logistics", "hr"}
    assert set(inventory.clusters) == {"onprem", "onprem-dr", "cloud"}
    assert inventory.locations["tenants/payments/flows/0/topics/1"] == "tenants/payments.yaml:13"
    assert inventory.locations["clusters/cloud/security"] == "clusters.yaml:20"
    assert [p.name for p in inventory.org_policies] == ["acme_owners.rego"]


def test_unknown_key_names_file_line_and_key(repo):
    edit(repo / "tenants/payments.yaml", "    groups: [\"payments-.*\"]\n    replication_policy",
         "    grups: [\"payments-.*\"]\n    replication_policy")
    assert problems_of(repo) == ["tenants/payments.yaml:14: flows[0].grups: unknown key 'grups'"]


def test_wrong_type_and_missing_key(repo):
    edit(repo / "tenants/marketing.yaml", "classification: internal\n", "")
    edit(repo / "tenants/marketing.yaml", 'owners: ["marketing-data@acme.example"]', "owners: 42")
    found = problems_of(repo)
    assert "tenants/marketing.yaml:2: owners: Input should be a valid list" in found
    assert "tenants/marketing.yaml:1: classification: missing required key 'classification'" in found


def test_duplicate_tenant_name(repo):
    shutil.copy(repo / "tenants/hr.yaml", repo / "tenants/hr-copy.yaml")
    assert problems_of(repo) == [
        "tenants/hr.yaml:2: name: tenant 'hr' is already defined in tenants/hr-copy.yaml"
    ]


def test_unknown_cluster_reference(repo):
    edit(repo / "tenants/marketing.yaml", "target: cloud", "target: clod")
    assert problems_of(repo) == [
        "tenants/marketing.yaml:11: flows[0].target: unknown cluster 'clod' "
        "(clusters.yaml defines: cloud, onprem, onprem-dr)"
    ]


def test_bad_java_regex(repo):
    edit(repo / "tenants/logistics.yaml", 'topics: ["logistics\\\\.shipments"]', 'topics: ["logistics\\\\.\\\\p{L}+"]')
    [problem] = problems_of(repo)
    assert problem.startswith("tenants/logistics.yaml:12: flows[0].topics[0]: regex 'logistics\\.\\p{L}+': ")
    assert "\\p" in problem.split(": ", 2)[2]  # the explanation is regex.py's


def test_yaml_syntax_error_has_a_line(repo):
    edit(repo / "tenants/hr.yaml", "classification: restricted", "classification: [restricted")
    [problem] = problems_of(repo)
    assert problem.startswith("tenants/hr.yaml:") and "YAML syntax" in problem


def test_duplicate_key_is_reported(repo):
    edit(repo / "tenants/hr.yaml", "classification: restricted", "classification: restricted\nclassification: public")
    assert "tenants/hr.yaml:5: classification: duplicate key 'classification'" in problems_of(repo)


def test_sasl_protocol_needs_a_mechanism(repo):
    edit(repo / "clusters.yaml", "security: {protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512, ca_secret: cloud",
         "security: {protocol: SASL_SSL, ca_secret: cloud")
    assert problems_of(repo) == [
        "clusters.yaml:20: clusters.cloud.security: sasl_mechanism is required with protocol SASL_SSL"
    ]


@pytest.mark.parametrize("name", ["../../etc", "a/b", "Cloud-CA", ".hidden", "ca secret"])
def test_a_secret_name_is_a_kubernetes_name(repo, name):
    """It names a Secret (Strimzi's secretName) and a folder of the secret store, and reaches generated MM2
    files as a path part (<secrets-path>/<ca_secret>/ca.crt): nothing else may be one."""
    edit(repo / "clusters.yaml", "ca_secret: cloud-cluster-ca", f"ca_secret: {json.dumps(name)}")
    [problem] = problems_of(repo)
    assert problem.startswith("clusters.yaml:20: clusters.cloud.security.ca_secret: must be a Kubernetes name: ")


def test_all_problems_are_reported_together(repo):
    edit(repo / "tenants/hr.yaml", "name: hr", "name: hr\ncolour: blue")
    edit(repo / "tenants/risk.yaml", "target: onprem-dr", "target: mars")
    assert len(problems_of(repo)) == 2


def test_not_a_directory_and_missing_clusters(tmp_path):
    with pytest.raises(ConfigError, match="not a directory"):
        load_inventory(tmp_path / "nope")
    assert problems_of(tmp_path) == ["clusters.yaml: missing: a governance repo needs clusters.yaml"]


def test_cli_exit_2_one_line_per_problem_no_traceback(repo):
    edit(repo / "tenants/hr.yaml", "name: hr", "name: hr\ncolour: blue")
    done = run_cli("validate", str(repo))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "tenants/hr.yaml:3: colour: unknown key 'colour'" in done.stderr


def test_schema_command_prints_json_schema():
    import json

    done = run_cli("schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert {"ClustersFile", "Tenant", "Flow", "Security"} <= set(schema["$defs"])
    assert schema["$defs"]["Tenant"]["additionalProperties"] is False


def test_unknown_home_cluster(repo):
    edit(repo / "tenants/hr.yaml", "clusters: [onprem]", "clusters: [onprem, mars]")
    assert problems_of(repo) == [
        "tenants/hr.yaml:5: clusters[1]: unknown cluster 'mars' (clusters.yaml defines: cloud, onprem, onprem-dr)"
    ]


# --- hostile YAML: sizes, aliases, nesting, control characters ----------------------------------------------

def billion_laughs() -> str:
    """The classic alias bomb: 9 levels of 9 aliases, 9**9 strings once expanded, well under 1 KiB."""
    lines = ['laugh0: &laugh0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 9):
        aliases = ", ".join([f"*laugh{level - 1}"] * 9)
        lines.append(f"laugh{level}: &laugh{level} [{aliases}]")
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(60)  # a hang guard: expanding 9**9 nodes would never end
def test_alias_bomb_is_refused_before_anything_expands_it(repo):
    bomb = billion_laughs()
    assert len(bomb.encode()) < 1024
    (repo / "tenants/bomb.yaml").write_text(bomb)
    found = problems_of(repo)
    assert found == [f"tenants/bomb.yaml:6: YAML: more than {loader.MAX_NODES} nodes once aliases are expanded "
                     "(an alias bomb?); a governance file has a few hundred"]


@pytest.mark.parametrize("text", ["[" * 20_000 + "]" * 20_000, "{a: " * 20_000 + "}" * 20_000,
                                  "a:\n" + "".join(f"{' ' * i}- \n" for i in range(1, 200))],
                         ids=["sequences", "mappings", "block-sequences"])
def test_deep_nesting_is_refused_without_recursion(repo, text):
    (repo / "tenants/deep.yaml").write_text(text)
    [problem] = problems_of(repo)
    assert problem.startswith("tenants/deep.yaml:")
    assert f"YAML: nested deeper than {loader.MAX_DEPTH} levels" in problem


@pytest.fixture(params=["libyaml", "libyaml-stops-first", "pure-python"])
def yaml_layer(request, monkeypatch):
    """Each parser layer that can stop a deep document first: libyaml with its own default limit (above mm2gov's),
    libyaml with its limit lowered below mm2gov's (through its own control, PyYAML 6.0.4+), the pure-Python one."""
    if request.param == "pure-python":
        monkeypatch.setattr(yaml_reader, "FAST_LOADER", yaml.SafeLoader)  # read_yaml's own module
        return request.param
    assert loader.FAST_LOADER is yaml.CSafeLoader, "the lock's PyYAML wheel carries libyaml"
    if request.param == "libyaml-stops-first":
        default = yaml._yaml._get_max_nest_level()
        yaml._yaml._set_max_nest_level(loader.MAX_DEPTH // 4)
        assert yaml._yaml._get_max_nest_level() == loader.MAX_DEPTH // 4
        request.addfinalizer(lambda: yaml._yaml._set_max_nest_level(default))
    return request.param


@pytest.mark.parametrize("text", ["[" * 20_000 + "]" * 20_000, "{a: " * 20_000 + "}" * 20_000,
                                  "a:\n" + "".join(f"{' ' * i}- \n" for i in range(1, 200)),
                                  "[" * (loader.MAX_DEPTH + 1) + "]" * (loader.MAX_DEPTH + 1)],
                         ids=["sequences", "mappings", "block-sequences", "one-past-the-limit"])
@pytest.mark.timeout(60)  # a hang guard; nothing recurses on 20,000 levels (a RecursionError would fail it)
def test_the_answer_to_deep_nesting_is_mm2govs_whichever_layer_stops_it(tmp_path, yaml_layer, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    problems: list = []
    assert loader.read_yaml(path, "tenants/deep.yaml", problems) is None
    [problem] = problems
    assert problem.file == "tenants/deep.yaml" and problem.line is not None and problem.line >= 1
    assert problem.message == (f"YAML: nested deeper than {loader.MAX_DEPTH} levels; "
                               "a governance file nests 5 or 6"), problem


def test_a_document_libyaml_refuses_but_yaml_allows_is_read(tmp_path, yaml_layer):
    """Within mm2gov's limits, what is read does not depend on libyaml's own limit."""
    path = tmp_path / "x.yaml"
    depth = loader.MAX_DEPTH
    path.write_text("[" * depth + "1" + "]" * depth)
    problems: list = []
    document = loader.read_yaml(path, "x.yaml", problems)
    assert problems == [] and document is not None
    value = document.data
    for _ in range(depth):
        [value] = value
    assert value == 1


def test_nesting_up_to_the_limit_is_read(tmp_path):
    path = tmp_path / "x.yaml"
    problems: list = []
    path.write_text("[" * loader.MAX_DEPTH + "]" * loader.MAX_DEPTH)
    assert loader.read_yaml(path, "x.yaml", problems) is not None and problems == []
    path.write_text("[" * (loader.MAX_DEPTH + 1) + "]" * (loader.MAX_DEPTH + 1))
    assert loader.read_yaml(path, "x.yaml", problems) is None and len(problems) == 1


def test_file_over_the_size_limit(repo):
    (repo / "tenants/big.yaml").write_text("name: big\nowners: [" + ", ".join(['"a@acme.example"'] * 80_000) + "]\n")
    assert (repo / "tenants/big.yaml").stat().st_size > loader.MAX_FILE_BYTES
    assert problems_of(repo) == ["tenants/big.yaml: larger than 1 MiB, the limit for one governance file "
                                 "(split it, or remove what is not governance)"]


def test_too_many_aliases(repo):
    owners = ", ".join(["*owner"] * (loader.MAX_ALIASES + 1))
    edit(repo / "tenants/hr.yaml", "name: hr", f'name: hr\nx-owners: &owner "hr@acme.example"\nx-more: [{owners}]')
    [problem] = problems_of(repo)
    assert problem == (f"tenants/hr.yaml:4: YAML: more than {loader.MAX_ALIASES} aliases (*name) in one file; "
                       "a governance file needs a few at most")


def test_recursive_alias_is_refused(repo):
    (repo / "tenants/loop.yaml").write_text("name: loop\nowners: &me [a, *me]\n")
    assert problems_of(repo) == ["tenants/loop.yaml:2: YAML: alias *me refers to a node that contains it "
                                 "(a recursive structure)"]


def test_undefined_alias_and_second_document(repo):
    (repo / "tenants/x.yaml").write_text("name: x\nowners: *nobody\n")
    (repo / "tenants/y.yaml").write_text("name: y\n---\nname: z\n")
    assert problems_of(repo) == ["tenants/x.yaml:2: YAML syntax: found undefined alias *nobody",
                                 "tenants/y.yaml:2: YAML syntax: expected a single document, found another one"]


def test_a_few_legit_anchors_still_load(repo):
    (repo / "tenants/payments.yaml").write_text(
        (repo / "tenants/payments.yaml").read_text()
        .replace('groups: ["payments-.*"]\n    replication_policy: default',
                 'groups: &groups ["payments-.*"]\n    replication_policy: default')
        .replace('    topics: ["payments\\\\..*"]\n    groups: ["payments-.*"]',
                 '    topics: ["payments\\\\..*"]\n    groups: *groups')
        .replace('principals:\n  - {name: "User:payments-app", access: [read, write]}\n'
                 '  - {name: "User:payments-analytics", access: [read]}',
                 'principals:\n  - &app {name: "User:payments-app", access: &rw [read, write]}\n'
                 '  - {<<: *app, name: "User:payments-analytics", access: [read]}'))
    assert "*groups" in (repo / "tenants/payments.yaml").read_text()
    inventory = load_inventory(repo)
    payments = inventory.tenants["payments"]
    assert [f.groups for f in payments.flows] == [["payments-.*"], ["payments-.*"]]
    assert [(p.name, p.access) for p in payments.principals] == [
        ("User:payments-app", ["read", "write"]), ("User:payments-analytics", ["read"])]
    assert inventory.locations["tenants/payments/flows/1/groups"] == "tenants/payments.yaml:19"
    assert inventory.locations["tenants/payments/principals/1/name"] == "tenants/payments.yaml:8"


CONTROL_CHARACTERS = ["\x00", "\t", "\n", "\r", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\x9b",
                      "\u2028", "\u2029"]


@pytest.mark.parametrize("char", CONTROL_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_control_character_in_a_topic_regex(repo, char):
    escaped = json.dumps(f"payments\\.refunds{char}x").strip('"')  # a YAML double-quoted escape
    edit(repo / "tenants/payments.yaml", '"payments\\\\.refunds"', f'"{escaped}"')
    assert problems_of(repo) == [
        f"tenants/payments.yaml:13: flows[0].topics[1]: control character U+{ord(char):04X} is not allowed "
        "(it would start a new line in generated files)"]


def test_control_characters_in_bootstrap_servers_and_in_keys(repo):
    edit(repo / "clusters.yaml", 'bootstrap_servers: "127.0.0.1:19093"',
         'bootstrap_servers: "127.0.0.1:19093\\nsasl.jaas.config=evil"')
    edit(repo / "clusters.yaml", "    zone: onprem\n", '    "zone\\u2028": onprem\n', )
    assert problems_of(repo) == [
        "clusters.yaml:4: clusters.onprem.bootstrap_servers: control character U+000A is not allowed "
        "(it would start a new line in generated files)",
        "clusters.yaml:5: clusters.onprem: control character U+2028 in a key is not allowed "
        "(it would start a new line in generated files)"]


def test_a_literal_block_scalar_is_refused(repo):
    edit(repo / "tenants/hr.yaml", 'owners: ["hr-systems@acme.example"]',
         "owners: |\n  a@acme.example\n  b@acme.example")
    assert problems_of(repo) == ["tenants/hr.yaml:3: owners: control character U+000A is not allowed "
                                 "(it would start a new line in generated files)"]


@pytest.mark.parametrize("name, text, expected", [
    ("bomb", billion_laughs(), "more than 100000 nodes"),
    ("deep", "[" * 20_000 + "]" * 20_000, "nested deeper than"),
    ("newline", 'name: x\nowners: ["a@acme.example\\nfoo=bar"]\n', "owners[0]: control character U+000A"),
])
def test_cli_exit_2_one_message_no_traceback(repo, name, text, expected):
    (repo / f"tenants/{name}.yaml").write_text(text)
    done = run_cli("validate", str(repo), timeout=60)  # bounded: TimeoutExpired fails the test
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [problem] = [line for line in done.stderr.splitlines() if f"tenants/{name}.yaml" in line]
    assert expected in problem
    assert "(1 problem)" in done.stderr


# Plain data of the shapes a governance file has: the loader must read it exactly as PyYAML does.
_text = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029"), max_size=12)
_scalars = st.none() | st.booleans() | st.integers() | _text
_data = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_data, shared=st.booleans(), flow=st.booleans())
def test_reads_what_pyyaml_reads(tmp_path, data, shared, flow):
    # shared: the same object twice, which safe_dump writes as an anchor and an alias
    document = {"a": data, "b": data if shared else None}
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    problems: list = []
    read = loader.read_yaml(path, "x.yaml", problems)
    assert problems == [] and read is not None
    assert read.data == yaml.safe_load(text) == document
    assert read.line(("a",)) == 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_text, char=st.sampled_from([*CONTROL_CHARACTERS, "\x01", "\x90", "\x9f"]), after=_text,
       in_key=st.booleans())
def test_any_control_character_anywhere_is_refused(tmp_path, before, char, after, in_key):
    text = before + char + after
    document = {"flows": [{"topics": ["ok", {text: 1} if in_key else text]}]}
    path = tmp_path / "x.yaml"
    # escaped: written raw, U+0085, U+2028 and U+2029 are YAML line breaks, and never reach a value
    path.write_text(yaml.safe_dump(document, allow_unicode=False), encoding="utf-8")
    problems: list = []
    assert loader.read_yaml(path, "x.yaml", problems) is None
    [problem] = problems
    assert problem.message.startswith("flows[0].topics[1]: control character ")
    assert f"U+{ord(char):04X}" in problem.message


# Reading never leaves the repository (issue 24, class 4): a tenant's pull request can add symlinks. The
# outside file holds a marker that must appear in no output, as a secret would.
OUTSIDE_SECRET = "outside-secret-7f3a"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "creds.yaml").write_text(f"name: {OUTSIDE_SECRET}\nowners: [{OUTSIDE_SECRET}]\n")
    (folder / "leak.rego").write_text(f"package acme.leak\n\n{OUTSIDE_SECRET} := 1 +\n")
    return folder


def _link(path: Path, to: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.symlink_to(to)


REFUSED = "refused: it resolves outside the repository (a symlink); mm2gov reads nothing outside the repository"


@pytest.mark.parametrize("where, to, expected", [
    ("tenants/evil.yaml", "creds.yaml", "tenants/evil.yaml"),
    ("tenants/hr.yaml", "creds.yaml", "tenants/hr.yaml"),  # an existing tenant file replaced by a link
    ("clusters.yaml", "creds.yaml", "clusters.yaml"),
    ("policies/evil.rego", "leak.rego", "policies/evil.rego"),
])
def test_a_symlink_out_of_the_repo_is_refused_and_not_read(repo, outside, where, to, expected):
    _link(repo / where, outside / to)
    assert f"{expected}: {REFUSED}" in problems_of(repo)


@pytest.mark.parametrize("folder", ["tenants", "policies"])
def test_a_folder_linked_out_of_the_repo_is_refused(repo, outside, folder):
    shutil.copy(outside / "creds.yaml", outside / "x.yaml")
    _link(repo / folder, outside)
    found = problems_of(repo)
    expected = {"tenants": ["tenants/creds.yaml", "tenants/x.yaml"], "policies": ["policies/leak.rego"]}[folder]
    assert [p for p in found if REFUSED in p] == [f"{file}: {REFUSED}" for file in expected]


def test_links_inside_the_repo_are_read(repo):
    (repo / "shared").mkdir()
    (repo / "tenants/hr.yaml").rename(repo / "shared/hr.yaml")
    (repo / "tenants/hr.yaml").symlink_to(Path("../shared/hr.yaml"))
    assert "hr" in load_inventory(repo).tenants


def test_a_fifo_or_a_broken_link_is_refused_without_blocking(repo):
    import os

    os.mkfifo(repo / "tenants/fifo.yaml")
    (repo / "tenants/gone.yaml").symlink_to(repo / "nowhere.yaml")
    found = problems_of(repo)
    assert "tenants/fifo.yaml: refused: not a regular file" in found
    assert "tenants/gone.yaml: cannot read: a broken or looping symlink" in found


@pytest.mark.parametrize("command", ["validate", "generate"])
def test_the_cli_refuses_links_out_with_exit_2_and_echoes_nothing(repo, outside, tmp_path, command):
    _link(repo / "tenants/hr.yaml", outside / "creds.yaml")
    _link(repo / "policies/acme_owners.rego", outside / "leak.rego")
    extra = ["--out", str(tmp_path / "out")] if command == "generate" else []
    done = run_cli(command, str(repo), *extra, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"tenants/hr.yaml: {REFUSED}" in done.stderr and f"policies/acme_owners.rego: {REFUSED}" in done.stderr
    assert OUTSIDE_SECRET not in done.stdout + done.stderr
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_cluster_alias_that_makes_reserved_topics_remote_is_refused(repo):
    text = (repo / "clusters.yaml").read_text()
    onprem = text[text.index("  onprem:\n"):text.index("  onprem-dr:\n")]
    (repo / "clusters.yaml").write_text(text + onprem.replace("  onprem:\n", "  mm2gov:\n"))
    [problem] = problems_of(repo)
    assert problem.startswith("clusters.yaml:") and "clusters.mm2gov: alias 'mm2gov' is reserved: its remote topics " \
        "'mm2gov.*' would cover the reserved topic prefix 'mm2gov.'" in problem


@pytest.mark.parametrize("field, value", [
    ("topic_prefixes", "pay ments."), ("topic_prefixes", "payments.${jndi:ldap://x/a}."),
    ("topic_prefixes", "payments.#x."), ("topic_prefixes", "paym\u00ebnts."), ("topic_prefixes", "p" * 250),
    ("grants", "payments.public. x"), ("grants", "payments.public.${x}"),
])
def test_a_topic_prefix_no_topic_name_can_start_with_is_refused_where_it_is_written(repo, field, value):
    """A topic name holds only letters, digits, '.', '_' and '-', at most 249 of them (Kafka's Topic.validate):
    a prefix or granted prefix with anything else names no topic and is refused at its line, not compiled
    into ACLs and regexes that match nothing."""
    path = repo / "tenants" / "payments.yaml"
    tenant = yaml.safe_load(path.read_text())
    if field == "grants":
        tenant["grants"][0]["topics"] = [value]
    else:
        tenant["topic_prefixes"] = [value]
    path.write_text(yaml.safe_dump(tenant, allow_unicode=True))
    with pytest.raises(ConfigError) as refused:
        load_inventory(repo)
    where = "grants[0].topics[0]" if field == "grants" else "topic_prefixes[0]"
    assert "tenants/payments.yaml:" in str(refused.value) and where in str(refused.value)
    assert "letters, digits, '.', '_' and '-' only, at most 249" in str(refused.value)  # the rule, not a regex
    if field == "grants":
        tenant["grants"][0]["topics"] = ["payments.public."]
    else:
        tenant["topic_prefixes"] = ["payments."]
    path.write_text(yaml.safe_dump(tenant, allow_unicode=True))
    load_inventory(repo)  # the same file with a legal value loads


# -- `plan` loads base and head with one ReadCache: a load that shares it finds what a load of its own finds --

def _outcome(repo: Path, cache: loader.ReadCache | None = None) -> object:
    """What loading `repo` gives: its problems, or what the inventory holds (all but its root)."""
    try:
        inventory = load_inventory(repo, cache)
    except InvalidConfig as invalid:
        return [str(p) for p in invalid.problems]
    return (inventory.clusters, inventory.tenants, inventory.tenant_files, inventory.locations,
            inventory.patterns, [p.name for p in inventory.org_policies], inventory.capacity)


def _copied_under_another_name(repo: Path) -> None:  # same bytes, another path: its problems name the copy
    shutil.copy(repo / "tenants/payments.yaml", repo / "tenants/payments-copy.yaml")


def _hr_swapped_with_risk(repo: Path) -> None:  # each path now holds the bytes the other path held
    hr, risk = (repo / "tenants/hr.yaml").read_bytes(), (repo / "tenants/risk.yaml").read_bytes()
    (repo / "tenants/hr.yaml").write_bytes(risk)
    (repo / "tenants/risk.yaml").write_bytes(hr)


def _linked_out(repo: Path) -> None:  # a link out of the repo to a file holding the head's very bytes
    outside = repo.parent / "outside-hr.yaml"
    shutil.copy(repo / "tenants/hr.yaml", outside)
    _link(repo / "tenants/hr.yaml", outside)


CHANGES = {
    "unchanged": lambda repo: None,
    "a regex changed": lambda repo: edit(repo / "tenants/payments.yaml", "payments\\\\.", "payments\\\\.x"),
    "a file broken": lambda repo: edit(repo / "tenants/marketing.yaml", "owners:", "owners: ["),
    "a file removed": lambda repo: (repo / "tenants/risk.yaml").unlink(),
    "a file copied under another name": _copied_under_another_name,
    "two files swapped": _hr_swapped_with_risk,
    "a file linked out of the repo": _linked_out,
    "a cluster removed": lambda repo: edit(repo / "clusters.yaml", "  onprem-dr:", "  gone:"),
}


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("changed_first", [False, True], ids=["head-first", "changed-first"])
def test_a_load_sharing_the_read_cache_finds_what_its_own_load_finds(tmp_path, change, changed_first):
    head, changed = tmp_path / "head", tmp_path / "changed"
    shutil.copytree(ACME, head)
    shutil.copytree(ACME, changed)
    CHANGES[change](changed)
    alone = {repo: _outcome(repo) for repo in (head, changed)}
    assert change == "unchanged" or alone[changed] != alone[head]  # the change is one a load sees
    cache = loader.ReadCache()
    for repo in ([changed, head] if changed_first else [head, changed]):
        assert _outcome(repo, cache) == alone[repo]


def test_the_second_load_parses_only_the_tenant_files_that_changed(tmp_path, monkeypatch):
    head, base = tmp_path / "head", tmp_path / "base"
    shutil.copytree(ACME, head)
    shutil.copytree(ACME, base)
    edit(base / "tenants/payments.yaml", "payments\\\\.", "payments\\\\.x")
    parsed: list[str] = []
    real_parse = loader.parse_yaml

    def counting(raw: bytes, file: str, problems: list) -> object:
        parsed.append(file)
        return real_parse(raw, file, problems)

    monkeypatch.setattr(loader, "parse_yaml", counting)
    cache = loader.ReadCache()
    load_inventory(head, cache)
    assert sorted(parsed) == [f"tenants/{t}.yaml" for t in ("hr", "logistics", "marketing", "payments", "risk")]
    parsed.clear()
    assert load_inventory(base, cache).tenants["payments"].flows[0].topics[0].startswith("payments\\.x")
    assert parsed == ["tenants/payments.yaml"]
