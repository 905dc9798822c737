package mm2gov.admission_test

import data.mm2gov
import data.mm2gov.admission
import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

test_decision_allows_when_no_violation if {
	d := t.decide(t.request("ConfigMap", "settings", "payments", {}))
	d == {"allowed": true, "violations": []}
}

test_decision_collects_every_family_sorted if {
	topic := {"metadata": {"name": "marketing.x"}}
	req := object.union(t.request("KafkaTopic", "marketing.x", "payments", topic), {"operation": "UPDATE", "old_tenant": "marketing"})
	d := t.decide(req)
	not d.allowed
	[v.rule | some v in d.violations] == ["admission_tenant_changed", "admission_topic_outside_scope"]
	d.violations == sort(d.violations)
	every v in d.violations {
		object.keys(v) == {"rule", "severity", "tenant", "message", "location"}
		startswith(v.rule, "admission_")
	}
}

test_decision_defined_without_repo_or_input if {
	d := admission.decision
	d.allowed == false
}

test_organisation_admission_rules_are_collected if {
	v := {"rule": "admission_acme", "severity": "low", "tenant": "payments", "message": "m", "location": ""}
	d := admission.decision with input as t.request("ConfigMap", "settings", "payments", {})
		with data.mm2gov_repo as t.repo
		with data.mm2gov.admission.rules.acme.violations as {v}
	d == {"allowed": false, "violations": [v]}
}

# The repo decision never collects admission rules: they live outside mm2gov.rules.
test_repo_decision_ignores_admission_rules if {
	req := t.request("KafkaTopic", "marketing.x", "payments", {"metadata": {"name": "marketing.x"}})
	d := mm2gov.decision with input as object.union(fx.base, req) with data.mm2gov_repo as t.repo
	d.violations == []
	not "admission" in object.keys(data.mm2gov.rules)
}
