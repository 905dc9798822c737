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
