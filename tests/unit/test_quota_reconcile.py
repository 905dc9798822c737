"""Client quotas: live vs desired on one cluster (kafka/reconcile.py), pure. The brokers' side is
tests/integration/test_quotas.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from governance.kafka.reconcile import ClusterSnapshot, reconcile, reconcile_quotas
from governance.model.quota import QUOTA_KEYS, ClientQuota, QuotaChange
from governance.render import changes as render_changes

PRINCIPALS = [f"User:p{i}" for i in range(6)]
NOT_OURS = ("controller_mutation_rate",)  # a key Kafka knows on a user entity that mm2gov does not own

rates = st.integers(min_value=1, max_value=10**9)
percentages = st.floats(min_value=0.5, max_value=400, allow_nan=False).map(lambda v: round(v, 2))
quotas = st.builds(ClientQuota, st.none() | rates, st.none() | rates, st.none() | percentages)
live_values = st.fixed_dictionaries({}, optional={
    "producer_byte_rate": rates.map(float), "consumer_byte_rate": rates.map(float),
    "request_percentage": percentages, "controller_mutation_rate": percentages}).filter(bool)


def applied(live: dict[str, dict[str, float]], changes: list[QuotaChange]) -> dict[str, dict[str, float]]:
    """What the brokers hold once AlterClientQuotas ran the changes (kafka/quotas.py sends exactly these ops);
    an entity left without keys is gone, as DescribeClientQuotas shows it."""
    after = {principal: dict(values) for principal, values in live.items()}
    for change in changes:
        entity = after.setdefault(change.principal, {})
        entity.update(change.to_set())
        for key in change.to_remove():
            del entity[key]
    return {principal: values for principal, values in after.items() if values}


@given(desired=st.dictionaries(st.sampled_from(PRINCIPALS), quotas),
       owned_before=st.sets(st.sampled_from(PRINCIPALS)),
       live=st.dictionaries(st.sampled_from(PRINCIPALS), live_values))
def test_applying_the_changes_yields_the_desired_quotas_and_touches_nothing_else(desired, owned_before, live):
    owned = owned_before | set(desired)  # as reconcile(): what mm2gov owned, and every principal it now sets
    changes = reconcile_quotas("cloud", desired, owned, live)
    after = applied(live, changes)
    assert all(c.principal in owned and c.cluster == "cloud" for c in changes)
    for principal in set(live) - owned:  # a neighbour: untouched
        assert after[principal] == live[principal]
    for principal in set(live) | set(after):  # keys mm2gov does not own: untouched, whoever holds them
        held = {k: v for k, v in live.get(principal, {}).items() if k not in QUOTA_KEYS}
        assert {k: v for k, v in after.get(principal, {}).items() if k not in QUOTA_KEYS} == held
    for principal in owned:  # an owned principal: exactly the repo's keys
        mine = {k: v for k, v in after.get(principal, {}).items() if k in QUOTA_KEYS}
        assert mine == desired.get(principal, ClientQuota()).values()
    assert reconcile_quotas("cloud", desired, owned, after) == []  # apply twice: no change the second time


def test_a_change_sets_what_is_new_or_different_and_removes_what_the_repo_dropped():
    change = QuotaChange("cloud", "User:mm2-x", ClientQuota(producer_byte_rate=10, request_percentage=50.0),
                         ClientQuota(producer_byte_rate=20, consumer_byte_rate=5))
    assert change.to_set() == {"producer_byte_rate": 20, "consumer_byte_rate": 5}
    assert change.to_remove() == ("request_percentage",)
    assert change.sign == "~"
    assert QuotaChange("cloud", "User:a", None, ClientQuota(consumer_byte_rate=1)).sign == "+"
    assert QuotaChange("cloud", "User:a", ClientQuota(consumer_byte_rate=1), None).sign == "-"


def test_the_brokers_float_equals_the_repos_integer():
    live = {"User:mm2-x": {"producer_byte_rate": 8333334.0, "controller_mutation_rate": 3.0}}
    assert reconcile_quotas("cloud", {"User:mm2-x": ClientQuota(producer_byte_rate=8333334)}, {"User:mm2-x"},
                            live) == []


def test_reconcile_removes_a_stale_principals_quota_and_leaves_a_neighbours():
    live = ClusterSnapshot("cloud", frozenset(), frozenset({"gone", "neighbour"}), frozenset({"User:gone"}),
                           quotas={"User:gone": {"consumer_byte_rate": 5.0, "controller_mutation_rate": 2.0},
                                   "User:neighbour": {"consumer_byte_rate": 7.0}})
    changes = reconcile("cloud", set(), {"User:new"}, live, quotas={"User:new": ClientQuota(producer_byte_rate=9)})
    assert changes.quotas == [QuotaChange("cloud", "User:gone", ClientQuota(consumer_byte_rate=5), None),
                              QuotaChange("cloud", "User:new", None, ClientQuota(producer_byte_rate=9))]
    assert changes.quotas[0].to_remove() == ("consumer_byte_rate",)  # its controller_mutation_rate is not ours
    assert changes.count == 2 + 2  # the stale user and the new one, two quotas
    assert changes.to_record()["quotas"] == [
        {"cluster": "cloud", "principal": "User:gone", "before": {"consumer_byte_rate": 5}, "after": None},
        {"cluster": "cloud", "principal": "User:new", "before": None, "after": {"producer_byte_rate": 9}}]
    assert render_changes.text([changes], "of drift").splitlines()[1:] == [
        "  - SCRAM user User:gone",
        "  + SCRAM user User:new",
        "  - quota User:gone on cloud: consumer_byte_rate 5 -> none",
        "  + quota User:new on cloud: none -> producer_byte_rate 9"]
