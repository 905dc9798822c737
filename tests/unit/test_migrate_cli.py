"""`mm2gov migrate` without clusters: the legacy file as MirrorMakerConfig reads it, bad input as one line and
exit 2, the judgement's refusals (legacy MM2 running, no legacy offsets, a flow that already ran, --force),
and the text/JSON renderings. The cut-over itself runs for real in tests/integration/test_migrate.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.migrate.live import Facts, FlowOffsets, judge, read_legacy
from governance.migrate.offsets import SOURCE_CONNECTOR, SourcePosition
from governance.migrate.plan import FLOW_OFFSETS, LEGACY_OFFSETS, POLICY, RUNNING, NewFlow
from governance.model.names import connect_names, flow_id
from governance.render import migrate as render
from tests.conftest import REPO_ROOT, run_cli

SECRET = "legacy-inline-s3cret"
LEGACY = f"""\
clusters = onprem, cloud
onprem.bootstrap.servers = 127.0.0.1:19093
cloud.bootstrap.servers = 127.0.0.1:29093
onprem->cloud.enabled = true
onprem->cloud.topics = payments\\\\..*, marketing\\\\..*
onprem.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username="mm2" password="{SECRET}";
"""


def legacy_file(tmp_path: Path, text: str = LEGACY) -> Path:
    path = tmp_path / "legacy.properties"
    path.write_text(text)
    return path


def acme(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    return repo


# --- the legacy file ----------------------------------------------------------------------------

def test_the_legacy_offsets_topic_group_and_policy_default_as_mirror_maker_config_does():
    legacy = read_legacy(LEGACY, "onprem->cloud", "legacy.properties")
    assert (legacy.offsets_topic, legacy.group, legacy.policy) == ("mm2-offsets.onprem.internal", "onprem-mm2",
                                                                   "default")
    assert legacy.topics == (r"payments\..*", r"marketing\..*")  # Java's escapes read as Java reads them
    assert legacy.groups == (".*",)
    assert SECRET not in repr(legacy)


def test_top_level_offset_storage_topic_beats_the_target_scoped_one():
    scoped = read_legacy(LEGACY + "cloud.offset.storage.topic = scoped\ncloud.group.id = g\n", "onprem->cloud", "f")
    assert (scoped.offsets_topic, scoped.group) == ("scoped", "g")
    both = read_legacy(LEGACY + "cloud.offset.storage.topic = scoped\noffset.storage.topic = top\n",
                       "onprem->cloud", "f")
    assert both.offsets_topic == "top"


@pytest.mark.parametrize(("extra", "policy"), [
    ("replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy", "identity"),
    ("onprem->cloud.replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
     "replication.policy.class = org.apache.kafka.connect.mirror.DefaultReplicationPolicy", "identity"),
    ("replication.policy.separator = _", None),
    ("replication.policy.class = com.example.MyPolicy", None),
    ("replication.policy.class = io.mm2gov.replication.FlowReplicationPolicy", "default"),
])
def test_the_legacy_replication_policy_is_named_only_when_mm2gov_can_compare_it(extra, policy):
    assert read_legacy(LEGACY + extra + "\n", "onprem->cloud", "f").policy == policy


@pytest.mark.parametrize(("pair", "text", "message"), [
    ("onprem-cloud", LEGACY, "--pair: expected SOURCE->TARGET"),
    ("onprem->dr", LEGACY, "cluster alias 'dr' is not in its clusters= line"),
    ("cloud->onprem", LEGACY, "cloud->onprem.enabled is not true"),
    ("onprem->cloud", LEGACY.replace("cloud.bootstrap.servers = 127.0.0.1:29093\n", ""),
     "no cloud.bootstrap.servers"),
])
def test_a_bad_legacy_file_or_pair_is_a_config_error(pair, text, message):
    with pytest.raises(ConfigError, match=message):
        read_legacy(text, pair, "legacy.properties")


# --- the command's bad input: one line, exit 2, no secret ---------------------------------------

@pytest.mark.parametrize(("pair", "text", "message"), [
    ("onprem=>cloud", LEGACY, "error: --pair: expected SOURCE->TARGET (cluster aliases), got 'onprem=>cloud'"),
    ("onprem->cloud", LEGACY.replace("127.0.0.1:29093", "cloud-kafka:9093"),
     "error: cluster 'cloud': the legacy file's bootstrap servers (cloud-kafka:9093) and clusters.yaml's "
     "(127.0.0.1:29093) share no broker"),
    ("onprem->cloud", LEGACY.replace("onprem->cloud.enabled = true", ""),
     "error: {legacy}: onprem->cloud.enabled is not true: the legacy MM2 did not replicate this pair"),
])
def test_migrate_bad_input_is_one_line_exit_2_without_the_secret(tmp_path, pair, text, message):
    path = legacy_file(tmp_path, text)
    done = run_cli("migrate", "--legacy", str(path), "--pair", pair, "--repo", str(acme(tmp_path)),
                   "--secrets-dir", str(tmp_path / "secrets"))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message.format(legacy=path) + "\n")


def test_a_repo_without_a_flow_of_the_pair_is_exit_2(tmp_path):
    text = LEGACY.replace("onprem->cloud", "cloud->onprem")
    done = run_cli("migrate", "--legacy", str(legacy_file(tmp_path, text)), "--pair", "cloud->onprem",
                   "--repo", str(acme(tmp_path)), "--secrets-dir", str(tmp_path / "secrets"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.endswith("no tenant has a flow cloud -> onprem\n") and "Traceback" not in done.stderr


def test_missing_admin_credentials_are_one_line_exit_3_before_any_cluster_is_reached(tmp_path):
    done = run_cli("migrate", "--legacy", str(legacy_file(tmp_path)), "--pair", "onprem->cloud",
                   "--repo", str(acme(tmp_path)), "--secrets-dir", str(tmp_path / "secrets"), "--apply")
    assert done.returncode == 3 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert "secret 'cloud-admin' has no key 'username'" in done.stderr and SECRET not in done.stderr


def test_help_names_both_modes_and_the_runbook():
    done = run_cli("migrate", "--help")
    assert done.returncode == 0 and "--dry-run / --apply" in done.stdout and "docs/migration.md" in done.stdout


# --- the judgement (pure) ------------------------------------------------------------------------

LEGACY_ACME = read_legacy(LEGACY, "onprem->cloud", "f")
PAY = NewFlow("payments", flow_id("payments", "onprem", "cloud"), "onprem", "cloud", (r"payments\..*",),
              ("payments.",))
MKT = NewFlow("marketing", flow_id("marketing", "onprem", "cloud"), "onprem", "cloud", (r"marketing\..*",),
              ("marketing.",))


def pos(topic: str, partition: int, offset: int) -> SourcePosition:
    return SourcePosition(SOURCE_CONNECTOR, "onprem", topic, partition, offset)


def facts(legacy=None, flow_offsets=None, members=None, found=True) -> Facts:
    held = legacy if legacy is not None else [pos("payments.orders", 0, 41), pos("marketing.leads", 0, 9),
                                              pos("other.x", 0, 3)]
    empty = {flow.flow: FlowOffsets(flow.offsets_topic, None, 0, {}, True) for flow in (PAY, MKT)}
    return Facts(found, len(held) + 2, {p.key: p for p in held},
                 {"payments.orders": 1, "marketing.leads": 1, "other.x": 1},
                 {("payments.orders", 0): (0, 100), ("marketing.leads", 0): (5, 10)},
                 {**empty, **(flow_offsets or {})}, {LEGACY_ACME.group: 0, **(members or {})})


def kinds(migration) -> list[tuple[str, str]]:
    return [(r.kind, r.topic) for r in migration.plan.refusals]


def test_a_clean_cut_over_seeds_each_flow_with_its_own_positions():
    migration = judge(LEGACY_ACME, [PAY, MKT], facts())
    assert migration.plan.ok and migration.already == ()
    assert [(s.flow, s.offsets_topic, s.position) for s in migration.pending()] == sorted([
        (MKT.flow, connect_names(MKT.flow).offsets, pos("marketing.leads", 0, 9)),
        (PAY.flow, connect_names(PAY.flow).offsets, pos("payments.orders", 0, 41))])
    assert [p.topic for p in migration.plan.untaken] == ["other.x"]


def test_a_running_mm2_or_no_legacy_positions_are_refused():
    running = judge(LEGACY_ACME, [PAY, MKT], facts(members={LEGACY_ACME.group: 1, connect_names(PAY.flow).group: 2}))
    assert sorted(kinds(running)) == [(RUNNING, connect_names(PAY.flow).group), (RUNNING, LEGACY_ACME.group)]
    absent = judge(LEGACY_ACME, [PAY, MKT], facts(legacy=[], found=False))
    assert (LEGACY_OFFSETS, LEGACY_ACME.offsets_topic) in kinds(absent)
    assert any(r.kind == LEGACY_OFFSETS and "does not exist" in r.detail for r in absent.plan.refusals)
    empty = judge(LEGACY_ACME, [PAY, MKT], facts(legacy=[]))
    assert any(r.kind == LEGACY_OFFSETS and "holds no MirrorSourceConnector position" in r.detail
               for r in empty.plan.refusals)


def test_a_flow_that_already_ran_is_refused_unless_forced_and_its_own_seeds_are_already_done():
    ran = FlowOffsets(PAY.offsets_topic, 25, 7, {pos("payments.orders", 0, 90).key: pos("payments.orders", 0, 90)},
                      False)
    refused = judge(LEGACY_ACME, [PAY, MKT], facts(flow_offsets={PAY.flow: ran}))
    assert kinds(refused) == [(FLOW_OFFSETS, PAY.offsets_topic)]
    forced = judge(LEGACY_ACME, [PAY, MKT], facts(flow_offsets={PAY.flow: ran}), force=True)
    assert forced.plan.ok and {s.flow for s in forced.pending()} == {PAY.flow, MKT.flow}
    seeded = FlowOffsets(PAY.offsets_topic, 25, 1, {pos("payments.orders", 0, 41).key: pos("payments.orders", 0, 41)},
                         True)
    again = judge(LEGACY_ACME, [PAY, MKT], facts(flow_offsets={PAY.flow: seeded}))
    assert again.plan.ok and again.already == (PAY.flow,) and {s.flow for s in again.pending()} == {MKT.flow}


def test_a_flow_naming_remote_topics_otherwise_is_refused():
    identity = NewFlow(PAY.tenant, PAY.flow, "onprem", "cloud", PAY.topics, PAY.prefixes, "identity")
    assert (POLICY, "") in kinds(judge(LEGACY_ACME, [identity], facts()))


# --- rendering ----------------------------------------------------------------------------------

def test_text_shows_where_each_flow_resumes_and_the_verdict():
    out = render.text(judge(LEGACY_ACME, [PAY, MKT], facts()))
    lines = out.splitlines()
    row = next(line for line in lines if "payments.orders[0]" in line).split()
    assert row == [PAY.flow, "payments.orders[0]", "42", "0/100", "58", PAY.offsets_topic]
    assert "not migrated (no flow takes it): other.x[0] at 4" in lines
    assert lines[-1] == "OK: 2 seed(s) for 2 flow(s); `migrate --apply` writes them"
    assert render.text(judge(LEGACY_ACME, [PAY, MKT], facts()), {PAY.offsets_topic: 1, MKT.offsets_topic: 1}
                       ).splitlines()[-1].startswith("APPLIED: 2 seed(s) written and read back in 2 offsets topic(s)")


def test_json_is_one_document_with_seeds_and_refusals():
    migration = judge(LEGACY_ACME, [PAY, MKT], facts(members={LEGACY_ACME.group: 1}))
    document = json.loads(render.as_json(migration))
    assert document["schema"] == "mm2gov.migrate/v1" and document["ok"] is False and document["applied"] is False
    assert document["refusals"] == [{"kind": RUNNING, "topic": LEGACY_ACME.group, "partition": None,
                                     "detail": migration.plan.refusals[0].detail}]
    assert {(s["flow"], s["topic"], s["resumes_at"], s["source_log_end"]) for s in document["seeds"]} == {
        (PAY.flow, "payments.orders", 42, 100), (MKT.flow, "marketing.leads", 10, 10)}
    assert document["verdict"] == "REFUSED: 1 refusal(s); nothing was written"
    assert SECRET not in json.dumps(document)


def test_the_new_flows_are_the_repos_flows_of_the_pair_with_their_mm2s_exclusions():
    from governance.compile.mm2 import TOPICS_EXCLUDE
    from governance.config.regex import split_list
    from governance.migrate.live import new_flows
    from tests.tools.decided import decided_example

    flows = new_flows(*decided_example(REPO_ROOT / "examples" / "acme"), LEGACY_ACME)
    assert {(f.tenant, f.source, f.target) for f in flows} == {
        ("logistics", "onprem", "cloud"), ("marketing", "onprem", "cloud"), ("payments", "onprem", "cloud")}
    assert all(f.exclude[:len(split_list(TOPICS_EXCLUDE))] == tuple(split_list(TOPICS_EXCLUDE)) for f in flows)
    assert {f.tenant: f.replication_policy for f in flows}["logistics"] == "identity"


def test_a_repo_with_violations_is_refused_before_any_cluster_is_read(tmp_path):
    """A hostile tenant claims another's prefix to be seeded with its positions: the policies (a real OPA)
    refuse the repo, as apply and generate do, before a secret or a cluster is touched."""
    repo = acme(tmp_path)
    (repo / "tenants" / "mallory.yaml").write_text(
        'name: mallory\nowners: ["m@example.com"]\nclassification: internal\ntopic_prefixes: ["payments."]\n'
        'group_prefixes: ["mallory-"]\nprincipals: []\n'
        'flows:\n  - {source: onprem, target: cloud, topics: ["payments\\\\..*"], groups: ["mallory-.*"]}\n')
    done = run_cli("migrate", "--legacy", str(legacy_file(tmp_path)), "--pair", "onprem->cloud", "--repo", str(repo),
                   "--secrets-dir", str(tmp_path / "secrets"), "--apply")
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.endswith("error: refusing to act on a repo with high or critical violations\n")
    assert "mallory" in done.stderr and SECRET not in done.stderr
