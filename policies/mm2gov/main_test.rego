package mm2gov_test

import data.mm2gov
import data.mm2gov.lib.input_test as fx

test_clean_repo_has_no_violations if {
	d := mm2gov.decision with input as fx.base
	d.violations == []
	object.keys(d.scopes) == {"payments", "marketing"}
	d.scopes.payments.tenant == "payments"
}

test_violations_of_every_family_sorted if {
	bad := object.union(fx.base, {
		"clusters": {
			"cloud": {"security": {"protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN"}},
			"onprem": {"security": {"protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512"}},
		},
		"tenants": {"marketing": {"principals": [{"name": "User:*", "access": ["read"]}]}},
	})
	d := mm2gov.decision with input as bad
	[[v.rule, v.location] | some v in d.violations] == [
		["cluster_sasl_plain_without_tls", "clusters.yaml:15"],
		["cluster_plaintext", "clusters.yaml:6"],
		["principal_wildcard", "tenants/marketing.yaml:10"],
		["confidential_weak_transport", "tenants/payments.yaml:15"],
		["confidential_weak_transport", "tenants/payments.yaml:16"],
	]
	d.violations == sort(d.violations)
	every v in d.violations {
		object.keys(v) == {"rule", "severity", "tenant", "message", "location"}
	}
}

test_organisation_rules_are_collected if {
	org := {lib_violation("acme_owner_domain", "medium", "payments", "owner is not an acme.example address", "tenants/payments.yaml:2")}
	d := mm2gov.decision with input as fx.base with data.mm2gov.rules.acme_naming.violations as org
	d.violations == [lib_violation("acme_owner_domain", "medium", "payments", "owner is not an acme.example address", "tenants/payments.yaml:2")]
}

lib_violation(rule, severity, tenant, message, location) := data.mm2gov.lib.input.violation(rule, severity, tenant, message, location)
