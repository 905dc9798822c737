"""Client quotas on real brokers (issue 27): `apply` of a sized repo sets exactly OUT/quotas/<cluster>.json, read
back with Kafka's own kafka-configs and with the admin API; a neighbour's quota and a key mm2gov does not own stay
as they were; a second apply changes nothing; removing the capacity removes exactly mm2gov's keys; `drift` sees a
quota changed or removed behind mm2gov's back; a quota the brokers refuse stops apply with nothing applied; the
audit collects the quotas as the brokers hold them.

On the session stack (clusters `source` and `target`), shared with this worker's other modules: the repo has one
tenant of its own (a fresh name each run), whose flow source -> target is sized, so its MM2 principal gets a
fetch quota on `source` and a produce quota on `target`. Each test applies the state it starts from, so the tests
hold in any order; every module applies its own repo first (which removes what mm2gov owned before), and this one
removes at its end the quotas it set by hand and the ones mm2gov set, so it leaves no quota behind.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kafka.protocol.admin import AlterClientQuotasRequest

from devstack.kafka import ADMIN_USER
from devstack.repo import as_yaml, tenant_document, write_stack_repo
from devstack.stack import Stack
from governance.config import load_inventory
from governance.errors import RuntimeFailure
from governance.files import YAML_DUMPER
from governance.kafka.admin import (
    admin_client,
    describe_acls,
    scram_users,
)
from governance.kafka.quotas import (
    TIMEOUT_MS,
    USER_ENTITY,
    LiveQuotas,
    alter_user_quotas,
    describe_user_quotas,
    quota_client,
    user_entity,
)
from governance.model.names import flow_id, mm2_principal
from governance.model.quota import QUOTA_KEYS, ClientQuota, QuotaChange
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.tools.failures import limited_admin
from tests.tools.kafka_tool import CONFIG_COMMAND, kafka_tool

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")

RUN = uuid.uuid4().hex[:5]  # this run's names: the stack's brokers are shared with the worker's other modules
TENANT = f"quo{RUN}"
SOURCE, TARGET = "source", "target"
SIZED_CLUSTERS = (SOURCE, TARGET)  # where the sized flow reads and writes: the stack's two clusters
MM2 = mm2_principal(flow_id(TENANT, SOURCE, TARGET))  # fetch quota on source, produce quota on target
NEIGHBOUR = f"User:neighbour-{RUN}"  # not mm2gov's: its quota is set beforehand and must stay
NEIGHBOUR_QUOTA = {"consumer_byte_rate": 1234.0}
NOT_OURS = {"controller_mutation_rate": 7.0}  # a key mm2gov does not own, on a principal it owns
QUOTA_LINE = re.compile(r"^Quota configs for user-principal '(?P<user>[^']+)' are (?P<values>.*)$")

CATCH_UP = 3_000_000  # the flow's catch-up rate, bytes/s: what its quotas carry
CAPACITY = {"bytes_per_second": 1_000_000, "catch_up_bytes_per_second": CATCH_UP, "source_partitions": 3}
BROKERS = {SOURCE: 1, TARGET: 1}  # the session stack's clusters have one broker each
CAPACITY_FILE = {
    "calibration": {"measured_at": "2026-11-27T10:00:00Z", "measured_by": "a test, not a measurement",
                    "kafka_version": "4.3.1", "task_bytes_per_second": 1_000_000,
                    "node": {"tasks": 2, "cpu": "1", "memory": "1Gi", "heap": "512m"}},
    "limits": {"flow_bytes_per_second": 10_000_000, "flow_nodes": 2},
    "clusters": {alias: {"brokers": n, "replication_bytes_per_second": 100_000_000} for alias, n in BROKERS.items()},
}


def per_broker(alias: str) -> int:
    """docs/capacity.md: the catch-up rate over the cluster's `brokers` in capacity.yaml, rounded up (Kafka holds
    each broker to the quota separately)."""
    return -(-CATCH_UP // BROKERS[alias])


FETCH_QUOTA, PRODUCE_QUOTA = per_broker(SOURCE), per_broker(TARGET)


def sized_repo(stack: Stack, root: Path, capacity: dict[str, int] | None) -> Path:
    """The tenant's repo on the stack with capacity.yaml, its flow sized by `capacity` (None: not sized)."""
    write_stack_repo(stack, root, [TENANT])
    (root / "capacity.yaml").write_text(yaml.dump(CAPACITY_FILE, Dumper=YAML_DUMPER))
    if capacity is not None:
        tenant_file = root / "tenants" / f"{TENANT}.yaml"
        document = yaml.safe_load(tenant_file.read_text())
        document["flows"][0]["capacity"] = capacity
        tenant_file.write_text(yaml.dump(document, Dumper=YAML_DUMPER))
    return root


def by_hand(stack: Stack, alias: str, keys: dict[str, dict[str, float | None]]) -> None:
    """Set (a value) or remove (None) any keys of principals' quotas with one AlterClientQuotas of Kafka's protocol,
    not mm2gov's code: a neighbour's or an operator's hand, behind mm2gov's back."""
    entry = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest(validate_only=False, entries=[
        entry(entity=[entry.EntityData(entity_type=USER_ENTITY, entity_name=user_entity(principal))],
              ops=[entry.OpData(key=key, value=value or 0.0, remove=value is None) for key, value in values.items()])
        for principal, values in keys.items()])
    with quota_client(alias, stack.kafka[alias].admin_config()) as client:
        response = client.send_and_receive(client.least_loaded_node(bootstrap_fallback=True), request,
                                           timeout_ms=TIMEOUT_MS)
    assert not any(done.error_code for done in response.entries), response


@pytest.fixture(scope="module")
def estate(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("quotas")
    sized, unsized = sized_repo(stack, root / "sized", CAPACITY), sized_repo(stack, root / "unsized", None)
    secrets, out = root / "secrets", root / "out"
    stack.export_secret_store(secrets)
    generated = run_cli("generate", str(sized), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    # The stack converged to this module's unsized repo first: a module before it on this worker may have left
    # quotas mm2gov owns (test_mm2_nodes' sized flows), which the first sized apply would otherwise also remove
    # and report (seen in a run with four workers). Every test's apply then changes this module's quotas only.
    apply(unsized, secrets)
    hand_set = {NEIGHBOUR: NEIGHBOUR_QUOTA, MM2: NOT_OURS}
    for alias in SIZED_CLUSTERS:  # beforehand, not by mm2gov: a neighbour's quota, a key not mm2gov's
        by_hand(stack, alias, hand_set)
    try:
        yield {"sized": sized, "unsized": unsized, "secrets": secrets, "out": out, "scratch": root}
    finally:  # no quota left on the shared stack: every key of the two principals, by hand and by mm2gov
        for alias in SIZED_CLUSTERS:
            by_hand(stack, alias, {principal: dict.fromkeys(keys) for principal, keys in
                                   quotas_by_admin_api(stack, alias).items() if principal in hand_set})
            assert not {NEIGHBOUR, MM2} & set(quotas_by_admin_api(stack, alias)), alias


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


def test_apply_sets_exactly_the_quotas_of_out_quotas(stack, estate):
    applied = apply(estate["sized"], estate["secrets"])
    assert {(q["cluster"], q["principal"]) for c in applied["clusters"] for q in c["quotas"]} <= {
        (SOURCE, MM2), (TARGET, MM2)}
    assert in_out_quotas(estate["out"], SOURCE) == {MM2: {"consumer_byte_rate": FETCH_QUOTA}}
    assert in_out_quotas(estate["out"], TARGET) == {MM2: {"producer_byte_rate": PRODUCE_QUOTA}}
    for alias in SIZED_CLUSTERS:
        by_kafka, by_api = quotas_by_kafka_configs(stack, alias, estate["scratch"]), quotas_by_admin_api(stack, alias)
        assert by_kafka == by_api, alias
        assert owned_keys(by_kafka) == in_out_quotas(estate["out"], alias), alias
        assert_neighbour_and_foreign_key_kept(by_kafka)


def test_a_second_apply_changes_nothing(estate):
    apply(estate["sized"], estate["secrets"])
    again = apply(estate["sized"], estate["secrets"])
    assert again["changes"] == 0 and not any(c["quotas"] for c in again["clusters"])
    drift = run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"]))
    assert drift.returncode == 0, drift.stdout + drift.stderr


def test_drift_reports_a_quota_changed_or_removed_behind_mm2govs_back(stack, estate):
    apply(estate["sized"], estate["secrets"])
    by_hand(stack, TARGET, {MM2: {"producer_byte_rate": 1000}})
    by_hand(stack, SOURCE, {MM2: {"consumer_byte_rate": None}})
    drift = run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"]))
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert (f"  ~ quota {MM2} on {TARGET}: producer_byte_rate 1000 -> producer_byte_rate {PRODUCE_QUOTA}"
            in drift.stdout), drift.stdout
    assert f"  + quota {MM2} on {SOURCE}: none -> consumer_byte_rate {FETCH_QUOTA}" in drift.stdout, drift.stdout
    repaired = apply(estate["sized"], estate["secrets"])
    assert repaired["changes"] == 2
    assert run_cli("drift", str(estate["sized"]), "--secrets-dir", str(estate["secrets"])).returncode == 0
    for alias in SIZED_CLUSTERS:
        live = quotas_by_admin_api(stack, alias)
        assert owned_keys(live) == in_out_quotas(estate["out"], alias)
        assert_neighbour_and_foreign_key_kept(live)


def test_removing_the_capacity_removes_exactly_mm2govs_keys(stack, estate):
    apply(estate["sized"], estate["secrets"])
    removed = apply(estate["unsized"], estate["secrets"])
    assert sorted((q["cluster"], q["principal"], q["after"]) for c in removed["clusters"] for q in c["quotas"]) == [
        (SOURCE, MM2, None), (TARGET, MM2, None)]
    for alias in SIZED_CLUSTERS:
        live = quotas_by_kafka_configs(stack, alias, estate["scratch"])
        assert owned_keys(live) == {}, alias
        assert live[MM2] == NOT_OURS  # what was not mm2gov's stays
        assert live[NEIGHBOUR] == NEIGHBOUR_QUOTA


def test_a_quota_the_brokers_refuse_is_one_message_naming_cluster_and_principal(stack):
    with quota_client(TARGET, stack.kafka[TARGET].admin_config()) as client:
        before = describe_user_quotas(TARGET, client)
        refused = QuotaChange(TARGET, f"User:refused-{RUN}", None, ClientQuota(producer_byte_rate=-5))
        expected = rf"^cluster {TARGET}: the brokers refused the client quota of User:refused-{RUN}: INVALID_REQUEST"
        with pytest.raises(RuntimeFailure, match=expected):
            alter_user_quotas(TARGET, client, [refused], validate_only=True)
        with pytest.raises(RuntimeFailure, match=expected):
            alter_user_quotas(TARGET, client, [refused])
        assert describe_user_quotas(TARGET, client) == before


def test_the_audit_collects_every_user_quota_as_the_brokers_hold_it(stack, estate):
    """The audit's snapshot table `quotas` (spark_audit/collect.py), which MM2_PRINCIPAL_WITHOUT_QUOTA reads: every
    key of every named user entity, mm2gov's and not, as kafka-configs prints them."""
    from spark_audit.collect import collect

    apply(estate["sized"], estate["secrets"])
    collected = collect(load_inventory(estate["sized"]).clusters, DirSecretStore(estate["secrets"]))
    assert collected.partial == []
    assert {row[0] for row in collected.rows["quotas"]} == set(SIZED_CLUSTERS)
    for alias in SIZED_CLUSTERS:
        by_kafka = quotas_by_kafka_configs(stack, alias, estate["scratch"])
        assert sorted(row[1:] for row in collected.rows["quotas"] if row[0] == alias) == sorted(
            (principal, key, value) for principal, values in by_kafka.items() for key, value in values.items())


LIMITED = f"limited-admin-{RUN}"  # may do everything apply needs on target but one operation on the cluster


def test_apply_refused_a_quota_on_one_cluster_changes_no_cluster(stack, estate, tmp_path):
    """AlterClientQuotas needs ALTER_CONFIGS on the cluster: with target's admin denied it, applying the sized repo
    over the unsized state is refused in one line naming target and the MM2 principal, exit 3, and source, whose
    admin may set its quota, is not changed either (every cluster's quotas are validated before any change)."""
    apply(estate["unsized"], estate["secrets"])
    with limited_admin(stack, TARGET, LIMITED, "ALTER_CONFIGS", estate["sized"], estate["secrets"],
                       tmp_path) as (repo, secrets):
        before = {alias: quotas_by_admin_api(stack, alias) for alias in SIZED_CLUSTERS}
        refused = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert (f"cluster {TARGET}: the brokers refused the client quota of {MM2}: CLUSTER_AUTHORIZATION_FAILED"
                in refused.stderr), refused.stderr
        assert {alias: quotas_by_admin_api(stack, alias) for alias in SIZED_CLUSTERS} == before
        assert not owned_keys(before[SOURCE])  # source would have got the MM2's fetch quota


def test_apply_whose_admin_may_not_alter_one_cluster_changes_no_cluster(stack, estate, tmp_path):
    """Creating ACLs and SCRAM users needs ALTER on the cluster: with target's admin denied it, applying a repo
    with a new tenant is refused before any change, in one line naming target, exit 3 (the brokers' own answer
    to DescribeCluster says what the admin may do); source, whose admin may, gets none of the tenant's ACLs
    or users either (before, source was changed and target failed at its first SCRAM user)."""
    apply(estate["unsized"], estate["secrets"])
    tenant = f"q{RUN}-new"
    with limited_admin(stack, TARGET, LIMITED, "ALTER", estate["unsized"], estate["secrets"], tmp_path) as (repo,
                                                                                                     secrets):
        (repo / "tenants" / f"{tenant}.yaml").write_text(as_yaml(tenant_document(tenant)))
        refused = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"error: cluster {TARGET}: its admin principal may not ALTER the cluster" in refused.stderr
        assert "Traceback" not in refused.stderr
        for alias in (SOURCE, TARGET):
            admin = admin_client(stack.kafka[alias].admin_config())
            assert not [b for b in describe_acls(admin) if tenant in b.principal], alias
            assert not [user for user in scram_users(admin) if tenant in user], alias
