package mm2gov.rules.grants_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.grants

# payments with one grant.
granting(grant) := fx.repo([object.union(fx.payments, {"grants": [grant]}), fx.marketing])

test_valid_grant_passes_every_rule if {
	vs := grants.violations with input as fx.base
	vs == set()
}

test_grant_to_known_tenant_pass if {
	vs := grants.violations with input as fx.base
	fx.hits(vs, "grant_unknown_tenant") == set()
}

test_grant_to_unknown_tenant_fires if {
	vs := grants.violations with input as granting({"to": "marketting", "topics": ["payments.public."], "access": ["read"]})
	fx.hits(vs, "grant_unknown_tenant") == {["payments", "tenants/payments.yaml:30"]}
	count(vs) == 1
	some v in vs
	v.severity == "high"
	v.message == "tenant payments: grant to 'marketting' names a tenant that does not exist (tenants: marketing, payments); fix the name or remove the grant"
}

test_read_grant_pass if {
	vs := grants.violations with input as fx.base
	fx.hits(vs, "grant_write") == set()
}

test_write_grant_fires if {
	vs := grants.violations with input as granting({"to": "marketing", "topics": ["payments.public."], "access": ["read", "write"]})
	fx.hits(vs, "grant_write") == {["payments", "tenants/payments.yaml:34"]}
	count(vs) == 1
	some v in vs
	contains(v.message, "gives 'write' access")
}

test_named_grant_topic_pass if {
	vs := grants.violations with input as fx.base
	fx.hits(vs, "grant_wildcard") == set()
}

test_wildcard_grant_topic_fires if {
	every topic in ["*", ".*", "", ".", "-", "_"] {
		vs := grants.violations with input as granting({"to": "marketing", "topics": ["payments.public.", topic], "access": ["read"]})
		fx.hits(vs, "grant_wildcard") == {["payments", "tenants/payments.yaml:32"]}
		[v | some v in vs; v.rule == "grant_wildcard"; v.severity == "critical"; contains(v.message, "e.g. 'payments.public.'")] != []
		fx.hits(vs, "grant_outside_scope") == set() # grant_wildcard says it all
	}
}

test_grant_inside_prefix_pass if {
	exact := granting({"to": "marketing", "topics": ["payments."], "access": ["read"]})
	vs := grants.violations with input as exact
	fx.hits(vs, "grant_outside_scope") == set()
}

test_grant_outside_prefix_fires if {
	vs := grants.violations with input as granting({"to": "marketing", "topics": ["payments.public.", "pay"], "access": ["read"]})
	fx.hits(vs, "grant_outside_scope") == {["payments", "tenants/payments.yaml:32"]}
	count(vs) == 1
	some v in vs
	v.message == "tenant payments: grant to marketing has topic prefix 'pay', which is not inside payments's topic prefixes [payments.]; a tenant can only grant its own topics, so start it with one of them"
}

test_wildcard_example_without_topic_prefixes if {
	bare := fx.repo([object.union(fx.payments, {"topic_prefixes": [], "grants": [{"to": "marketing", "topics": ["*"], "access": ["read"]}]}), fx.marketing])
	vs := grants.violations with input as bare
	some v in vs
	v.rule == "grant_wildcard"
	contains(v.message, "e.g. 'payments.public.'")
}
