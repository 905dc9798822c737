# Every object mm2gov puts into governed namespaces for examples/acme is
# admitted, and the same objects under another tenant are not. `inputs` and
# `repo` come from a data module that tests/tools/gen_acme_admission_data.py
# writes at test time (tests/integration/test_admission_data.py runs
# `opa test policies/ tests/rego/ <data>`); this file is not in policies/, so
# `opa test policies/` alone does not need it.
package mm2gov.admission.acme_test

import data.mm2gov.admission

decide(req) := d if {
	d := admission.decision with input as req with data.mm2gov_repo as repo
}

test_every_generated_object_is_admitted if {
	count([i | some i in inputs; i.kind != "Secret"]) == 25
	count([i | some i in inputs; i.kind == "Secret"]) > 25
	{i.kind | some i in inputs} == {"KafkaMirrorMaker2", "KafkaTopic", "KafkaUser", "Secret"}
	refused := [[i.kind, i.namespace, i.name, d.violations] |
		some i in inputs
		d := decide(i)
		not d.allowed
	]
	refused == []
}

# In the Strimzi namespaces the repo names each object's owner; in the
# tenants' namespaces their label does.
# (Cluster CA certificates in Strimzi namespaces belong to no tenant.)
test_tenants_come_from_namespaces_and_owners if {
	every i in [i | some i in inputs; not ca_certificate(i)] {
		i.tenant != ""
		i.tenant_from in {"namespace", "owner"}
	}
	{i.tenant_from | some i in inputs; startswith(i.namespace, "kafka-"); not ca_certificate(i)} == {"owner"}
	{i.tenant | some i in inputs; startswith(i.namespace, "kafka-"); ca_certificate(i)} == {""}
}

# Cluster CA certificates are public: any tenant may hold them.
test_generated_objects_are_refused_to_another_tenant if {
	every i in [i | some i in inputs; not ca_certificate(i)] {
		i.tenant != ""
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

ca_certificate(i) if i.object.metadata.labels["mm2gov.io/kind"] == "ca"
