package mm2gov.rules.principals_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.principals

test_principals_of_one_tenant_pass if {
	vs := principals.violations with input as fx.base
	fx.hits(vs, "principal_in_two_tenants") == set()
}

test_same_principal_twice_in_one_tenant_pass if {
	twice := object.union(fx.payments, {"principals": [
		{"name": "User:payments-app", "access": ["read"]},
		{"name": "User:payments-app", "access": ["write"]},
	]})
	vs := principals.violations with input as fx.repo([twice, fx.marketing])
	fx.hits(vs, "principal_in_two_tenants") == set()
}

test_principal_in_two_tenants_fires_for_both if {
	risk := fx.tenant("risk", {"principals": [
		{"name": "User:risk-app", "access": ["read"]},
		{"name": "User:payments-app", "access": ["read"]},
	]})
	vs := principals.violations with input as fx.repo([fx.payments, fx.marketing, risk])
	fx.hits(vs, "principal_in_two_tenants") == {["payments", "tenants/payments.yaml:10"], ["risk", "tenants/risk.yaml:12"]}
	some v in vs
	v.tenant == "payments"
	v.severity == "high"
	v.message == "tenant payments: principal User:payments-app is also declared by tenant risk, so it would get the ACLs of both tenants; give each tenant its own principal"
}

test_principal_in_three_tenants_names_the_others if {
	shared := [{"name": "User:shared", "access": ["read"]}]
	repo := fx.repo([
		fx.tenant("payments", {"principals": shared}),
		fx.tenant("marketing", {"principals": shared}),
		fx.tenant("risk", {"principals": shared}),
	])
	vs := principals.violations with input as repo
	count(fx.hits(vs, "principal_in_two_tenants")) == 3
	some v in vs
	v.tenant == "marketing"
	contains(v.message, "also declared by tenant payments, risk")
}

test_named_principal_pass if {
	vs := principals.violations with input as fx.base
	fx.hits(vs, "principal_wildcard") == set()
}

test_wildcard_principal_fires if {
	star := object.union(fx.payments, {"principals": [{"name": "User:*", "access": ["read"]}]})
	vs := principals.violations with input as fx.repo([star])
	fx.hits(vs, "principal_wildcard") == {["payments", "tenants/payments.yaml:10"]}
	some v in vs
	v.severity == "critical"
	contains(v.message, "principal User:* contains '*'")
}

test_partial_wildcard_principal_fires if {
	star := object.union(fx.payments, {"principals": [
		{"name": "User:payments-app", "access": ["read"]},
		{"name": "User:payments-*", "access": ["read"]},
	]})
	vs := principals.violations with input as fx.repo([star])
	fx.hits(vs, "principal_wildcard") == {["payments", "tenants/payments.yaml:12"]}
}

strimzi_repo(principal) := object.union(
	fx.repo([fx.tenant("payments", {"principals": [principal]})]),
	{"clusters": {"cloud": {"strimzi_namespace": "kafka-cloud"}}},
)

test_a_principal_that_cannot_name_a_kafka_user_fires_where_strimzi_manages_its_clusters if {
	bad := {"name": "User:a/../../etc/x", "kubernetes_name": false, "access": ["read"]}
	vs := principals.violations with input as strimzi_repo(bad)
	fx.hits(vs, "principal_not_kubernetes_name") == {["payments", "tenants/payments.yaml:10"]}
	some v in vs
	v.rule == "principal_not_kubernetes_name"
	contains(v.message, "principal User:a/../../etc/x gets ACLs on cloud, which Strimzi manages")
}

test_a_kubernetes_name_or_no_strimzi_passes if {
	good := {"name": "User:payments-app", "kubernetes_name": true, "access": ["read"]}
	vs := principals.violations with input as strimzi_repo(good)
	fx.hits(vs, "principal_not_kubernetes_name") == set()
	bad := {"name": "User:Payments-App", "kubernetes_name": false, "access": ["read"]}
	no_strimzi := principals.violations with input as fx.repo([fx.tenant("payments", {"principals": [bad]})])
	fx.hits(no_strimzi, "principal_not_kubernetes_name") == set()
}
