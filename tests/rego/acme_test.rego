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

# The settings table, as the webhook pushes it with the repo, holds every
# generated KafkaMirrorMaker2: with another value for an entry a config is held
# to, or without an entry a config must carry, it is refused by the entry's
# rule, with the entry's why. (acme has no exactly_once flow: its entries are
# tested in mirrormaker_settings_test.rego.)
test_generated_mirror_makers_are_held_to_the_settings_table if {
	mirror_makers := [i | some i in inputs; i.kind == "KafkaMirrorMaker2"]
	count(mirror_makers) == 3
	count(held_configs(mirror_makers[0])) > 4
	every i in mirror_makers {
		every item in held_configs(i) {
			[entry, _, config] := item
			other := json.patch(i, [{"op": "add", "path": sprintf("%s/%s", [config, entry.key]), "value": "mm2gov-other"}])
			refused_by(decide(other), entry)
		}
		every item in [item | some item in held_configs(i); item[1].required] {
			[entry, _, config] := item
			without := json.patch(i, [{"op": "remove", "path": sprintf("%s/%s", [config, entry.key])}])
			refused_by(decide(without), entry)
		}
	}
}

# [entry, how it is held, the config's JSON pointer in the input] of every entry
# held in a config the generated object has.
held_configs(i) := [[entry, held, config] |
	some entry in repo.mm2_settings
	not entry.exactly_once
	some name, held in entry.held
	config := config_pointer(i, name)
]

config_pointer(i, "worker") := "/object/spec/target/config" if is_object(i.object.spec.target.config)

config_pointer(i, name) := sprintf("/object/spec/mirrors/0/%s/config", [name]) if {
	name != "worker"
	is_object(i.object.spec.mirrors[0][name].config)
}

refused_by(d, entry) if {
	not d.allowed
	some v in d.violations
	v.rule == entry.rule
	contains(v.message, entry.why)
}
