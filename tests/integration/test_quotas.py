"""Client quotas on real brokers (issue 27): `apply` of the sized acme repo sets exactly OUT/quotas/<cluster>.json,
read back with Kafka's own kafka-configs and with the admin API; a neighbour's quota and a key mm2gov does not own
stay as they were; a second apply changes nothing; removing the capacity removes exactly mm2gov's keys; `drift`
sees a quota changed or removed behind mm2gov's back; a quota the brokers refuse stops apply with nothing applied;
the audit collects the quotas as the brokers hold them.

The stack here has examples/acme's three clusters (onprem, onprem-dr, cloud; Kafka only), so the repo is the
sized acme repo with only its clusters.yaml pointed at them, as the demo does (the session stack's clusters are
`source` and `target`). Each test applies the state it starts from, so the tests hold in any order.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from devstack.demo import DEMO_CLUSTERS
from devstack.kafka import ADMIN_USER
from devstack.stack import Stack, StackSpec
from governance.config import load_inventory
from governance.errors import RuntimeFailure
from governance.kafka.admin import admin_client, create_acls, upsert_scram_user
from governance.kafka.quotas import LiveQuotas, alter_user_quotas, describe_user_quotas, quota_client
from governance.model.acl import AclBinding
from governance.model.quota import QUOTA_KEYS, ClientQuota, QuotaChange
from governance.secrets.store import DirSecretStore
from governance.secrets.values import SecretValue, random_password
from tests.conftest import run_cli
from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with
from tests.tools.kafka_tool import CONFIG_COMMAND, kafka_tool

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")

MM2 = f"User:mm2-{FLOW}"  # the sized flow's MM2 principal: fetch quota on onprem, produce quota on cloud
NEIGHBOUR = "User:neighbour"  # not mm2gov's: its quota is set beforehand and must stay
NEIGHBOUR_QUOTA = {"consumer_byte_rate": 1234.0}
NOT_OURS = {"controller_mutation_rate": 7.0}  # a key mm2gov does not own, on a principal it owns
SIZED_CLUSTERS = ("onprem", "cloud")  # where the sized flow reads and writes
QUOTA_LINE = re.compile(r"^Quota configs for user-principal '(?P<user>[^']+)' are (?P<values>.*)$")


@pytest.fixture(scope="module")
def acme_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(StackSpec(run_dir=tmp_path_factory.mktemp("acme-stack"), components=("kafka",),
                              kafka_clusters=DEMO_CLUSTERS)).up()
    try:
        yield running
    finally:
        running.down()


@pytest.fixture(scope="module")
def estate(acme_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("quotas")
    sized = acme_with(root / "sized", CAPACITY_YAML, PAYMENTS_CAPACITY)
    unsized = acme_with(root / "unsized", CAPACITY_YAML, None)
    for repo in (sized, unsized):
        (repo / "clusters.yaml").write_text(acme_stack.governance_clusters())
    secrets, out = root / "secrets", root / "out"
    acme_stack.export_secret_store(secrets)
    generated = run_cli("generate", str(sized), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    for alias in SIZED_CLUSTERS:  # beforehand, with Kafka's own tool: a neighbour's quota, a key not mm2gov's
        configs(acme_stack, alias, root, "--alter", "--entity-name", NEIGHBOUR.removeprefix("User:"),
                "--add-config", ",".join(f"{k}={v:g}" for k, v in NEIGHBOUR_QUOTA.items()))
        configs(acme_stack, alias, root, "--alter", "--entity-name", MM2.removeprefix("User:"),
                "--add-config", ",".join(f"{k}={v:g}" for k, v in NOT_OURS.items()))
    return {"sized": sized, "unsized": unsized, "secrets": secrets, "out": out, "scratch": root}


def configs(stack: Stack, alias: str, scratch: Path, *args: str) -> str:
    """kafka-configs --entity-type users ARGS on the cluster, as its admin."""
    password = stack.secrets[f"kafka.{alias}.admin.password"].reveal()
    return kafka_tool(stack, alias, ADMIN_USER, password, CONFIG_COMMAND, "--entity-type", "users", *args,
                      tmp_path=scratch)


def quotas_by_kafka_configs(stack: Stack, alias: str, scratch: Path) -> LiveQuotas:
    """Every user quota on the cluster, as `kafka-configs --describe --entity-type users` prints them."""
    printed = configs(stack, alias, scratch, "--describe")
    found: LiveQuotas = {}
    for line in printed.splitlines():
        if match := QUOTA_LINE.match(line):
            pairs = (item.split("=", 1) for item in match["values"].split(", "))
            found[f"User:{match['user']}"] = {key: float(value) for key, value in pairs}
    return found


def quotas_by_admin_api(stack: Stack, alias: str) -> LiveQuotas:
    with quota_client(alias, stack.kafka[alias].admin_config()) as client:
        return describe_user_quotas(alias, client)


def in_out_quotas(out: Path, alias: str) -> dict[str, dict[str, float]]:
    """OUT/quotas/<cluster>.json as principal -> its keys (none: no file)."""
    path = out / "quotas" / f"{alias}.json"
    rows = json.loads(path.read_text())["quotas"] if path.exists() else []
    return {row.pop("principal"): row for row in rows}


def owned_keys(live: LiveQuotas) -> dict[str, dict[str, float]]:
    """The keys mm2gov owns, per principal, the neighbour left out."""
    return {principal: mine for principal, values in live.items() if principal != NEIGHBOUR
            if (mine := {k: v for k, v in values.items() if k in QUOTA_KEYS})}


def apply(repo: Path, secrets: Path) -> dict:
    done = run_cli("apply", str(repo), "--secrets-dir", str(secrets), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_neighbour_and_foreign_key_kept(live: LiveQuotas) -> None:
    assert live[NEIGHBOUR] == NEIGHBOUR_QUOTA
    assert {k: v for k, v in live[MM2].items() if k not in QUOTA_KEYS} == NOT_OURS


def test_apply_sets_exactly_the_quotas_of_out_quotas(acme_stack, estate):
    applied = apply(estate["sized"], estate["secrets"])
    assert {(q["cluster"], q["principal"]) for c in applied["clusters"] for q in c["quotas"]} <= {
        ("onprem", MM2), ("cloud", MM2)}
    assert in_out_quotas(estate["out"], "onprem") == {MM2: {"consumer_byte_rate": 25000000}}
    assert in_out_quotas(estate["out"], "cloud") == {MM2: {"producer_byte_rate": 8333334}}
    for alias in DEMO_CLUSTERS:
        by_kafka, by_api = quotas_by_kafka_configs(acme_stack, alias, estate["scratch"]), \
            quotas_by_admin_api(acme_stack, alias)
        assert by_kafka == by_api, alias
        assert owned_keys(by_kafka) == in_out_quotas(estate["out"], alias), alias
        if alias in SIZED_CLUSTERS:
            assert_neighbour_and_foreign_key_kept(by_kafka)


def test_a_second_apply_changes_nothing(acme_stack, estate):
    apply(estate["sized"], estate["secrets"])
    again = apply(estate["sized"], estate["secrets"])
    assert again["changes"] == 0 and not any(c["quotas"] for c in again["clusters"])
    drift = run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"]))
    assert drift.returncode == 0, drift.stdout + drift.stderr


def test_drift_reports_a_quota_changed_or_removed_behind_mm2govs_back(acme_stack, estate):
    apply(estate["sized"], estate["secrets"])
    mm2 = MM2.removeprefix("User:")
    configs(acme_stack, "cloud", estate["scratch"], "--alter", "--entity-name", mm2,
            "--add-config", "producer_byte_rate=1000")
    configs(acme_stack, "onprem", estate["scratch"], "--alter", "--entity-name", mm2,
            "--delete-config", "consumer_byte_rate")
    drift = run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"]))
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert f"  ~ quota {MM2} on cloud: producer_byte_rate 1000 -> producer_byte_rate 8333334" in drift.stdout
    assert f"  + quota {MM2} on onprem: none -> consumer_byte_rate 25000000" in drift.stdout
    repaired = apply(estate["sized"], estate["secrets"])
    assert repaired["changes"] == 2
    assert run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"])).returncode == 0
    for alias in SIZED_CLUSTERS:
        live = quotas_by_admin_api(acme_stack, alias)
        assert owned_keys(live) == in_out_quotas(estate["out"], alias)
        assert_neighbour_and_foreign_key_kept(live)


def test_removing_the_capacity_removes_exactly_mm2govs_keys(acme_stack, estate):
    apply(estate["sized"], estate["secrets"])
    removed = apply(estate["unsized"], estate["secrets"])
    assert sorted((q["cluster"], q["principal"], q["after"]) for c in removed["clusters"] for q in c["quotas"]) == [
        ("cloud", MM2, None), ("onprem", MM2, None)]
    for alias in DEMO_CLUSTERS:
        live = quotas_by_kafka_configs(acme_stack, alias, estate["scratch"])
        assert owned_keys(live) == {}, alias
        if alias in SIZED_CLUSTERS:
            assert live[MM2] == NOT_OURS  # what was not mm2gov's stays
            assert live[NEIGHBOUR] == NEIGHBOUR_QUOTA


def test_a_quota_the_brokers_refuse_is_one_message_naming_cluster_and_principal(acme_stack):
    with quota_client("cloud", acme_stack.kafka["cloud"].admin_config()) as client:
        before = describe_user_quotas("cloud", client)
        refused = QuotaChange("cloud", "User:refused", None, ClientQuota(producer_byte_rate=-5))
        with pytest.raises(RuntimeFailure, match=r"^cluster cloud: the brokers refused the client quota of "
                                                 r"User:refused: INVALID_REQUEST"):
            alter_user_quotas("cloud", client, [refused], validate_only=True)
        with pytest.raises(RuntimeFailure, match=r"^cluster cloud: the brokers refused the client quota of "
                                                 r"User:refused: INVALID_REQUEST"):
            alter_user_quotas("cloud", client, [refused])
        assert describe_user_quotas("cloud", client) == before


def test_the_audit_collects_every_user_quota_as_the_brokers_hold_it(acme_stack, estate):
    """The audit's snapshot table `quotas` (spark_audit/collect.py), which MM2_PRINCIPAL_WITHOUT_QUOTA reads: every
    key of every named user entity, mm2gov's and not, as kafka-configs prints them."""
    from spark_audit.collect import collect

    apply(estate["sized"], estate["secrets"])
    collected = collect(load_inventory(estate["sized"]).clusters, DirSecretStore(estate["secrets"]))
    assert collected.partial == []
    assert {row[0] for row in collected.rows["quotas"]} == set(SIZED_CLUSTERS)  # onprem-dr holds none
    for alias in SIZED_CLUSTERS:
        by_kafka = quotas_by_kafka_configs(acme_stack, alias, estate["scratch"])
        assert sorted(row[1:] for row in collected.rows["quotas"] if row[0] == alias) == sorted(
            (principal, key, value) for principal, values in by_kafka.items() for key, value in values.items())


LIMITED = "limited-admin"  # may do everything apply needs on cloud but ALTER_CONFIGS on the cluster
LIMITED_ACLS = [AclBinding(f"User:{LIMITED}", "CLUSTER", "kafka-cluster", "LITERAL", "ALL"),
                AclBinding(f"User:{LIMITED}", "TOPIC", "*", "LITERAL", "ALL"),
                AclBinding(f"User:{LIMITED}", "GROUP", "*", "LITERAL", "ALL"),
                AclBinding(f"User:{LIMITED}", "CLUSTER", "kafka-cluster", "LITERAL", "ALTER_CONFIGS", "DENY")]


def test_apply_refused_a_quota_on_one_cluster_changes_no_cluster(acme_stack, estate, tmp_path):
    """AlterClientQuotas needs ALTER_CONFIGS on the cluster: with cloud's admin denied it, applying the sized repo
    over the unsized state is refused in one line naming cloud and the MM2 principal, exit 3, and onprem, whose
    admin may set its quota, is not changed either (every cluster's quotas are validated before any change)."""
    apply(estate["unsized"], estate["secrets"])
    password = random_password()
    cloud = admin_client(acme_stack.kafka["cloud"].admin_config())
    upsert_scram_user(cloud, LIMITED, password)
    create_acls(cloud, LIMITED_ACLS)
    repo, secrets = tmp_path / "limited", tmp_path / "secrets"
    shutil.copytree(estate["sized"], repo)
    shutil.copytree(estate["secrets"], secrets)
    clusters = (repo / "clusters.yaml").read_text()
    assert "admin_credentials_secret: cloud-admin}" in clusters
    (repo / "clusters.yaml").write_text(clusters.replace("admin_credentials_secret: cloud-admin}",
                                                         "admin_credentials_secret: cloud-limited}"))
    store = DirSecretStore(secrets)
    store.put("cloud-limited", "username", SecretValue(LIMITED))
    store.put("cloud-limited", "password", password)
    before = {alias: quotas_by_admin_api(acme_stack, alias) for alias in SIZED_CLUSTERS}
    refused = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert (f"cluster cloud: the brokers refused the client quota of {MM2}: CLUSTER_AUTHORIZATION_FAILED"
            in refused.stderr), refused.stderr
    assert {alias: quotas_by_admin_api(acme_stack, alias) for alias in SIZED_CLUSTERS} == before
    assert not owned_keys(before["onprem"])  # onprem would have got the MM2's fetch quota
