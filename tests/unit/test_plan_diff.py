"""The plan is a pure diff of two decisions: structure and effective permissions."""

from governance.compile.acls import tenant_bindings
from governance.model.acl import AclBinding
from governance.plan.diff import PermissionChange, make_plan
from governance.policy.engine import Decision, Violation
from governance.render import plan as render_plan


def scope(name, prefixes, principals, clusters=("onprem",), flows=(), grants=(), groups=()):
    return {"tenant": name, "topic_prefixes": list(prefixes), "group_prefixes": list(groups),
            "clusters": list(clusters), "flows": list(flows), "grants_given": list(grants), "grants_received": [],
            "principals": [{"name": n, "access": a,
                            "topic_operations": sorted({"DESCRIBE"} | {op.upper() for op in a}),
                            "group_operations": ["READ"] if "read" in a else []} for n, a in principals]}


FLOW = {"id": "payments-onprem-to-cloud", "source": "onprem", "target": "cloud", "replication_policy": "default",
        "topics": [r"payments\..*"], "groups": [], "remote_topic_prefixes": ["onprem.payments."]}
PAYMENTS = scope("payments", ["payments."], [("User:payments-app", ["read", "write"])], flows=[FLOW],
                 groups=["payments-"])
MARKETING = scope("marketing", ["marketing."], [("User:marketing-app", ["read"])])


def test_tenant_bindings_are_prefixed_least_privilege():
    bindings = tenant_bindings({"payments": PAYMENTS})
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
