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
	t.hits(d, "admission_tenant_missing") == {"metadata/labels"}
	d.violations[0].severity == "high"
	d.violations[0].tenant == ""
	t.message(d, "admission_tenant_missing") == "KafkaTopic payments.orders in namespace kafka-cloud has no tenant: neither the object nor its namespace carries the label mm2gov.io/tenant; label the namespace or the object mm2gov.io/tenant=<tenant>"
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
