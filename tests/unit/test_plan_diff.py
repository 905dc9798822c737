"""The plan is a pure diff of two decisions: structure and effective permissions."""

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.compile.acls import desired_bindings, tenant_bindings
from governance.model.acl import AclBinding
from governance.plan.diff import PermissionChange, make_plan
from governance.plan.topics import _Readers
from governance.policy.engine import Decision, Violation
from governance.render import plan as render_plan
from tests.tools.scopes import flow_scope, tenancy, tenant_scope

FLOW = flow_scope("payments", topics=[r"payments\..*"])
PAYMENTS = tenant_scope("payments", ["payments."], principals=[("User:payments-app", ["read", "write"])],
                        flows=[FLOW], groups=["payments-"])
MARKETING = tenant_scope("marketing", ["marketing."], principals=[("User:marketing-app", ["read"])])


def test_tenant_bindings_are_prefixed_least_privilege():
    bindings = tenant_bindings(tenancy(PAYMENTS))
    assert AclBinding("User:payments-app", "TOPIC", "payments.", "PREFIXED", "WRITE") in bindings["onprem"]
    assert AclBinding("User:payments-app", "GROUP", "payments-", "PREFIXED", "READ") in bindings["onprem"]
    # remote topics on the target are read-only for the tenant
    cloud_ops = {(b.resource_name, b.operation) for b in bindings["cloud"] if b.resource_type == "TOPIC"}
    assert cloud_ops == {("onprem.payments.", "READ"), ("onprem.payments.", "DESCRIBE")}
    assert all(b.pattern_type == "PREFIXED" and b.resource_name.endswith((".", "-", "_"))
               for items in bindings.values() for b in items)


def test_grant_gives_read_on_source_and_remote_prefix():
    granted = dict(PAYMENTS, grants_given=[{"to": "marketing", "topics": ["payments.public."], "access": ["read"]}])
    base = Decision({"payments": PAYMENTS, "marketing": MARKETING}, ())
    head = Decision({"payments": granted, "marketing": MARKETING}, ())
    plan = make_plan(base, head)
    assert {(c.cluster, c.binding.resource_name, c.binding.operation) for c in plan.permissions_gained} == {
        ("onprem", "payments.public.", "READ"), ("onprem", "payments.public.", "DESCRIBE"),
        ("cloud", "onprem.payments.public.", "READ"), ("cloud", "onprem.payments.public.", "DESCRIBE"),
    }
    assert {c.binding.principal for c in plan.permissions_gained} == {"User:marketing-app"}
    assert plan.permissions_lost == []
    assert plan.tenants_changed == ["payments"]
    text = render_plan.text(plan, "main")
    assert "+ User:marketing-app gains DESCRIBE, READ on cloud topic prefix onprem.payments.public." in text



def test_head_bindings_computed_ahead_give_the_same_plan():
    """`plan` computes the head's desired bindings while OPA decides the base, and hands them in."""
    granted = dict(PAYMENTS, grants_given=[{"to": "marketing", "topics": ["payments.public."], "access": ["read"]}])
    risk = tenant_scope("risk", ["risk."], principals=[("User:risk-app", ["read"])])
    base = Decision({"payments": PAYMENTS, "marketing": MARKETING, "risk": risk}, ())
    head = Decision({"payments": granted, "marketing": MARKETING}, ())
    ahead = make_plan(base, head, head_bindings=desired_bindings(head.tenancy))
    assert ahead == make_plan(base, head)
    assert ahead.permissions_gained and ahead.permissions_lost and ahead.tenants_removed == ["risk"]

def test_removed_tenant_loses_everything_and_new_violations_are_marked():
    old = Violation("prefix_overlap", "high", "marketing", "old", "tenants/marketing.yaml:3")
    new = Violation("grant_write", "high", "payments", "new", "tenants/payments.yaml:9")
    plan = make_plan(Decision({"payments": PAYMENTS, "marketing": MARKETING}, (old,)),
                     Decision({"payments": PAYMENTS}, (old, new)))
    assert plan.tenants_removed == ["marketing"]
    assert {c.binding.principal for c in plan.permissions_lost} == {"User:marketing-app"}
    assert plan.principals_removed == [{"tenant": "marketing", "principal": "User:marketing-app"}]
    assert plan.new_violations == [new]


def test_no_change_is_an_empty_plan():
    decision = Decision({"payments": PAYMENTS}, ())
    plan = make_plan(decision, decision)
    assert not plan.has_changes
    assert "no changes" in render_plan.text(plan, "main")
    markdown = render_plan.markdown(plan, "main")
    assert markdown.startswith("### mm2gov plan") and "0 permission gain(s), 0 loss(es)" in markdown


def test_permission_phrase():
    change = PermissionChange("cloud", AclBinding("User:x", "TOPIC", "onprem.payments.", "PREFIXED", "READ"))
    assert change.phrase("gains") == "User:x gains READ on cloud topic prefix onprem.payments."


def with_topics(topics, flows_scope=PAYMENTS):
    return dict(flows_scope, flows=[dict(FLOW, topics=list(topics))])


SOURCE_TOPICS = {"onprem": frozenset({"payments.orders", "payments.refunds", "payments.audit-internal",
                                      "marketing.leads", "mm2gov.x.offsets"})}


def test_added_and_removed_patterns_with_the_live_topics_they_start_and_stop():
    base = Decision({"payments": with_topics([r"payments\.orders"])}, ())
    head = Decision({"payments": with_topics([r"payments\.refunds", r"payments\..*-internal"])}, ())
    [change] = make_plan(base, head, SOURCE_TOPICS).flow_topics
    assert (change.status, change.patterns_added, change.patterns_removed) == (
        "changed", (r"payments\.refunds", r"payments\..*-internal"), (r"payments\.orders",))
    # topics.exclude still applies: an `-internal` topic is never replicated, whatever the pattern
    assert (change.topics_started, change.topics_stopped) == (("payments.refunds",), ("payments.orders",))
    assert change.remote_stopped == ("onprem.payments.orders",)
    # the flow stays: its readers keep READ on the remote prefix, so the kept remote topic stays readable
    assert change.readers_after == ("User:payments-app",)
    text = render_plan.text(make_plan(base, head, SOURCE_TOPICS), "main")
    assert "removes pattern payments\\.orders" in text
    assert "stops replicating onprem topic payments.orders" in text
    assert ("remote topics onprem.payments.orders stay on cloud with their data and are no longer updated"
            " (mm2gov never deletes topics)") in text


def test_without_live_topics_only_patterns_and_the_remote_prefix_are_shown():
    base = Decision({"payments": with_topics([r"payments\..*"])}, ())
    head = Decision({"payments": with_topics([])}, ())
    [change] = make_plan(base, head).flow_topics
    assert not change.live and change.topics_stopped == () and change.remote_prefixes == ("onprem.payments.",)
    record = make_plan(base, head).to_record()["flows"]["topics"][0]
    assert record["patterns"] == {"added": [], "removed": [r"payments\..*"]} and record["live"] is False
    assert "remote topics it already replicated (under onprem.payments.) stay on cloud" in render_plan.text(
        make_plan(base, head), "main")


def test_removed_flow_keeps_remote_topics_but_its_readers_lose_them():
    base = Decision({"payments": with_topics([r"payments\..*"])}, ())
    head = Decision({"payments": dict(PAYMENTS, flows=[])}, ())
    plan = make_plan(base, head, SOURCE_TOPICS)
    [change] = plan.flow_topics
    assert change.status == "removed" and change.readers_after == ()
    assert change.remote_stopped == ("onprem.payments.orders", "onprem.payments.refunds")
    assert ("cloud", "onprem.payments.", "READ") in {
        (c.cluster, c.binding.resource_name, c.binding.operation) for c in plan.permissions_lost
        if c.binding.principal == "User:payments-app"}
    assert "still readable on cloud by: none (the flow's READ ACLs go; see permissions)" in render_plan.text(
        plan, "main")


def test_unchanged_patterns_are_no_topic_change_and_markdown_quotes_hostile_patterns():
    decision = Decision({"payments": with_topics([r"payments\.orders"])}, ())
    assert make_plan(decision, decision, SOURCE_TOPICS).flow_topics == []
    two = Decision({"payments": with_topics([r"payments\.orders", r"payments\.refunds"])}, ())
    swapped = Decision({"payments": with_topics([r"payments\.refunds", r"payments\.orders"])}, ())
    assert make_plan(two, swapped, SOURCE_TOPICS).flow_topics == []  # MM2 ORs the patterns: order is no change
    hostile = Decision({"payments": with_topics([r"payments\.x`](http://evil)"])}, ())
    markdown = render_plan.markdown(make_plan(decision, hostile), "main")
    assert "adds pattern `` payments\\.x`](http://evil) ``" in markdown


def test_live_topics_are_only_the_tenants_own_and_a_bad_pattern_falls_back_to_patterns():
    base = Decision({"payments": with_topics([r"payments\.orders"])}, ())
    greedy = Decision({"payments": with_topics([r"payments\.orders", ".*"])}, ())
    [change] = make_plan(base, greedy, SOURCE_TOPICS).flow_topics
    # MM2's ACLs stop at the tenant's prefixes: a neighbour's topic is neither replicated nor named
    assert change.topics_started == ("payments.refunds",)
    bad = Decision({"payments": with_topics([r"payments\.(?i)orders"])}, ())
    [change] = make_plan(base, bad, SOURCE_TOPICS).flow_topics
    assert not change.live and change.patterns_added == (r"payments\.(?i)orders",)


def test_an_exclusion_added_to_a_flow_stops_what_it_matches_and_shows_in_the_plan():
    """A legacy blacklist translated into `exclude_topics` (or one added by pull request) is a topic change: the
    plan names it and, live, the topics it stops replicating, whose remote copies stay on the target."""
    patterns = [r"payments\..*"]
    base = Decision({"payments": with_topics(patterns)}, ())
    head_scope = dict(PAYMENTS, flows=[dict(FLOW, topics=patterns, exclude_topics=[r"payments\.ref.*"])])
    head = Decision({"payments": head_scope}, ())
    [change] = make_plan(base, head, SOURCE_TOPICS).flow_topics
    assert (change.patterns_added, change.patterns_removed, change.excludes_added) == ((), (), (r"payments\.ref.*",))
    assert (change.topics_started, change.topics_stopped) == ((), ("payments.refunds",))
    assert change.remote_stopped == ("onprem.payments.refunds",)
    text = render_plan.text(make_plan(base, head, SOURCE_TOPICS), "main")
    assert "adds exclusion payments\\.ref.*" in text and "stops replicating onprem topic payments.refunds" in text
    record = make_plan(base, head, SOURCE_TOPICS).to_record()["flows"]["topics"][0]
    assert record["excludes"] == {"added": [r"payments\.ref.*"], "removed": []}
    # and back: removing it starts the topic again
    [back] = make_plan(head, base, SOURCE_TOPICS).flow_topics
    assert (back.excludes_removed, back.topics_started) == ((r"payments\.ref.*",), ("payments.refunds",))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["User:a", "User:b", "User:c", "User:mm2-x"]),
                          st.sampled_from(["TOPIC", "GROUP"]), st.sampled_from(["", "p", "p.", "p.q", "p.q.", "q."]),
                          st.sampled_from(["LITERAL", "PREFIXED"]), st.sampled_from(["READ", "WRITE"])), max_size=12),
       st.lists(st.sampled_from(["p", "p.", "p.q", "p.q.", "p.q.r", "q.", "x"]), max_size=3))
def test_the_readers_index_answers_as_every_binding_read_one_by_one(rows, names):
    """Who may still READ a flow's remote prefixes (plan/topics.py): the index of bindings by name gives what
    checking every binding against every name gives (Kafka's PREFIXED: a leading part; LITERAL: the name)."""
    bindings = [AclBinding(p, t, n, k, o) for p, t, n, k, o in rows]
    mm2s = {"User:mm2-x"}

    def reads(b: AclBinding, name: str) -> bool:
        covers = name.startswith(b.resource_name) if b.pattern_type == "PREFIXED" else b.resource_name == name
        return b.resource_type == "TOPIC" and b.operation == "READ" and b.principal not in mm2s and covers

    expected = tuple(sorted(set.intersection(*({b.principal for b in bindings if reads(b, n)} for n in names)))) \
        if names else ()
    assert _Readers(bindings, mm2s).of_all(names) == expected
