# Every Strimzi object `mm2gov generate examples/acme` writes is admitted
# (inputs and repo in acme_data_test.rego), and the same objects under
# another tenant are not.
package mm2gov.admission.acme_test

import data.mm2gov.admission

decide(req) := d if {
	d := admission.decision with input as req with data.mm2gov_repo as repo
}

test_every_generated_object_is_admitted if {
	count(inputs) == 25
	{i.kind | some i in inputs} == {"KafkaMirrorMaker2", "KafkaTopic", "KafkaUser"}
	refused := [[i.kind, i.namespace, i.name, d.violations] |
		some i in inputs
		d := decide(i)
		not d.allowed
	]
	refused == []
}

test_generated_objects_are_refused_to_another_tenant if {
	every i in inputs {
		other := {"payments": "marketing", "marketing": "payments", "logistics": "payments", "hr": "payments", "risk": "payments"}[i.tenant]
		not decide(object.union(i, {"tenant": other})).allowed
	}
}

test_generated_objects_are_not_moved if {
	every i in inputs {
		d := decide(object.union(i, {"operation": "UPDATE", "old_tenant": "legacy"}))
		{v.rule | some v in d.violations} == {"admission_tenant_changed"}
	}
}
