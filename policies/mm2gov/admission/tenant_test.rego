package mm2gov.admission.rules.tenant_test

import data.mm2gov.admission.lib_test as t

configmap := {"metadata": {"name": "settings"}}

test_resolved_tenant_pass if {
	d := t.decide(t.request("ConfigMap", "settings", "payments", configmap))
	d == {"allowed": true, "violations": []}
}

test_tenant_missing_fires if {
	d := t.decide(t.request("KafkaTopic", "payments.orders", "", {"metadata": {"name": "payments.orders"}}))
	t.rules(d) == {"admission_tenant_missing"}
	t.hits(d, "admission_tenant_missing") == {"metadata/namespace"}
	d.violations[0].severity == "high"
	d.violations[0].tenant == ""
	startswith(t.message(d, "admission_tenant_missing"), "KafkaTopic payments.orders in namespace kafka-cloud has no tenant: the namespace carries no mm2gov.io/tenant label")
	contains(t.message(d, "admission_tenant_missing"), "the object's own label does not count")
}

test_tenant_unknown_fires if {
	d := t.decide(t.request("KafkaTopic", "payments.orders", "nobody", {"metadata": {"name": "payments.orders"}}))
	t.rules(d) == {"admission_tenant_unknown"}
	d.violations[0].tenant == "nobody"
	contains(t.message(d, "admission_tenant_unknown"), "add tenants/nobody.yaml")
}

test_tenant_unknown_when_repo_missing if {
	d := t.decide_in(t.request("ConfigMap", "settings", "payments", configmap), {})
	t.rules(d) == {"admission_tenant_unknown"}
}

test_update_keeping_the_tenant_pass if {
	req := object.union(t.request("ConfigMap", "settings", "payments", configmap), {"operation": "UPDATE", "old_tenant": "payments"})
	t.decide(req).allowed
}

test_update_adopting_an_object_pass if {
	req := object.union(t.request("ConfigMap", "settings", "payments", configmap), {"operation": "UPDATE", "old_tenant": ""})
	t.decide(req).allowed
}

test_tenant_changed_fires if {
	req := object.union(t.request("ConfigMap", "settings", "marketing", configmap), {"operation": "UPDATE", "old_tenant": "payments"})
	d := t.decide(req)
	t.rules(d) == {"admission_tenant_changed"}
	t.message(d, "admission_tenant_changed") == "ConfigMap settings belongs to tenant payments and this update would move it to tenant marketing; keep mm2gov.io/tenant=payments (and the namespace), or delete the object and create it anew for marketing"
}

test_create_ignores_old_tenant if {
	req := object.union(t.request("ConfigMap", "settings", "marketing", configmap), {"old_tenant": "payments"})
	t.decide(req).allowed
}

test_delete_checks_the_tenant_only if {
	bad_user := {"spec": {"authorization": {"type": "simple", "acls": [{"resource": {"type": "topic", "name": "*"}, "operations": ["All"]}]}}}
	req := object.union(t.request("KafkaUser", "payments-app", "payments", bad_user), {"operation": "DELETE"})
	t.decide(req).allowed
	t.rules(t.decide(object.union(req, {"tenant": ""}))) == {"admission_tenant_missing"}
}

test_input_not_an_object_fires if {
	every garbage in ["x", 1, null, [], true] {
		d := t.decide(garbage)
		t.rules(d) == {"admission_input_invalid"}
		not d.allowed
	}
}

test_empty_input_fires if {
	d := t.decide({})
	t.rules(d) == {"admission_input_invalid", "admission_tenant_missing"}
	count(t.hits(d, "admission_input_invalid")) == 1
	count([v | some v in d.violations; v.rule == "admission_input_invalid"]) == 2
}

test_unknown_operation_fires if {
	d := t.decide(object.union(t.request("ConfigMap", "settings", "payments", configmap), {"operation": "PATCH"}))
	t.rules(d) == {"admission_input_invalid"}
	t.message(d, "admission_input_invalid") == "ConfigMap settings: unknown operation PATCH (expected one of CONNECT, CREATE, DELETE, UPDATE); the request is refused"
}

test_missing_object_fires if {
	d := t.decide(t.request("KafkaTopic", "payments.orders", "payments", null))
	t.rules(d) == {"admission_input_invalid"}
	contains(t.message(d, "admission_input_invalid"), "carries no object")
}

# The object's label never chooses the tenant: one that names another tenant
# than the webhook resolved (from the namespace) is refused.
test_label_of_another_tenant_fires if {
	labelled := {"metadata": {"name": "payments.orders", "labels": {"mm2gov.io/tenant": "payments"}}}
	d := t.decide(t.request("KafkaTopic", "payments.orders", "marketing", labelled))
	"admission_tenant_label_mismatch" in t.rules(d)
	t.hits(d, "admission_tenant_label_mismatch") == {"metadata/labels/mm2gov.io~1tenant"}
	t.message(d, "admission_tenant_label_mismatch") == "KafkaTopic payments.orders is labelled mm2gov.io/tenant=payments, but it belongs to tenant marketing (by its namespace's label); a label cannot move an object to another tenant: set the label to marketing or remove it, or create the object in the other tenant's namespace"
	owner := object.union(t.request("KafkaTopic", "payments.orders", "marketing", labelled), {"tenant_from": "owner"})
	contains(t.message(t.decide(owner), "admission_tenant_label_mismatch"), "(as the governance repo's owner of what it names)")
	t.decide(t.request("KafkaTopic", "payments.orders", "payments", labelled)).allowed
	deleted := object.union(t.request("KafkaTopic", "payments.orders", "marketing", labelled), {"operation": "DELETE"})
	t.decide(deleted).allowed
}

# Facts the webhook computes must be there: without them nothing would be refused.
test_missing_facts_fire if {
	mm2 := object.remove(t.request("KafkaMirrorMaker2", "x", "payments", {"spec": {}}), ["secret_refs", "mirror_patterns"])
	d := t.decide(mm2)
	count([v | some v in d.violations; v.rule == "admission_input_invalid"]) == 2
	user := object.union(t.request("KafkaUser", "payments-app", "payments", {"spec": {}}), {"secret_refs": {}})
	t.rules(t.decide(user)) == {"admission_input_invalid"}
	contains(t.message(t.decide(user), "admission_input_invalid"), "lacks the secret_refs")
}
