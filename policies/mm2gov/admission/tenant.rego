# Every object the webhook sees belongs to exactly one known tenant, and keeps
# it: the tenant is what every other admission rule holds the object to.
# These rules apply to every kind and operation, DELETE included.
package mm2gov.admission.rules.tenant

import data.mm2gov.admission.lib

# Garbage in the request itself: deny rather than guess (fail closed).
violations contains lib.violation("admission_input_invalid", "high", msg, "") if {
	not lib.input_is_object
	msg := "the admission input is not an object; mm2gov's webhook sent something it cannot read, so the request is refused"
}

violations contains lib.violation("admission_input_invalid", "high", msg, "") if {
	lib.input_is_object
	not lib.operation in lib.operations
	msg := sprintf(
		"%s: unknown operation %v (expected one of %s); the request is refused",
		[lib.subject, object.get(input, "operation", null), lib.text_list(lib.operations)],
	)
}

violations contains lib.violation("admission_input_invalid", "high", msg, "") if {
	lib.input_is_object
	lib.kind == ""
	msg := "the admission input names no kind; the request is refused"
}

violations contains lib.violation("admission_input_invalid", "high", msg, "") if {
	lib.content_checked
	not lib.object_given
	msg := sprintf("%s: the admission input carries no object to check; the request is refused", [lib.subject])
}

# The facts mm2gov's webhook computes for a kind (regex facts, LIST items,
# bootstrap servers, Secret references): without them the rules would see
# nothing to refuse, so their absence is refused.
facts_fields := {
	"KafkaMirrorMaker2": {"patterns": "object", "mirror_patterns": "array", "bootstrap_servers": "object", "secret_refs": "array"},
	"KafkaUser": {"secret_refs": "array"},
}

violations contains lib.violation("admission_input_invalid", "high", msg, "") if {
	lib.content_checked
	some field, type in facts_fields[lib.kind]
	type_name(object.get(input, field, null)) != type
	msg := sprintf("%s: the admission input lacks the %s mm2gov's webhook computes; the request is refused", [lib.subject, field])
}

violations contains lib.violation("admission_tenant_missing", "high", msg, "metadata/namespace") if {
	lib.input_is_object
	lib.tenant_name == ""
	not lib.cluster_ca_secret
	msg := sprintf(
		"%s in namespace %s has no tenant: the namespace carries no mm2gov.io/tenant label, and it is not a Strimzi namespace of clusters.yaml where the governance repo names the object's owner (a flow's MirrorMaker 2, a principal's or flow's KafkaUser, a topic under a tenant's prefixes, a user's credentials); the object's own label does not count. Create it in its tenant's namespace, or label the namespace mm2gov.io/tenant=<tenant>",
		[lib.subject, lib.namespace],
	)
}

# The object's own label may repeat its tenant, never choose it: an object
# labelled for another tenant than its namespace (or, in a Strimzi namespace,
# than the repo's owner of it) is refused rather than judged as the label says.
violations contains lib.violation("admission_tenant_label_mismatch", "high", msg, "metadata/labels/mm2gov.io~1tenant") if {
	lib.content_checked
	lib.tenant_name != ""
	lib.label_tenant != null
	lib.label_tenant != lib.tenant_name
	msg := sprintf(
		"%s is labelled mm2gov.io/tenant=%v, but it belongs to tenant %s (%s); a label cannot move an object to another tenant: set the label to %s or remove it, or create the object in the other tenant's namespace",
		[lib.subject, lib.label_tenant, lib.tenant_name, tenant_source, lib.tenant_name],
	)
}

tenant_source := "by its namespace's label" if {
	lib.string_field("tenant_from") == "namespace"
} else := "as the governance repo's owner of what it names"

violations contains lib.violation("admission_tenant_unknown", "high", msg, "metadata/labels") if {
	lib.tenant_name != ""
	not lib.tenant
	msg := sprintf(
		"%s belongs to tenant %s, which the governance repo does not declare; fix the mm2gov.io/tenant label, or add tenants/%s.yaml to the repo first",
		[lib.subject, lib.tenant_name, lib.tenant_name],
	)
}

# Moving an object to another tenant would hand it, and what it names, over
# without either tenant's review.
violations contains lib.violation("admission_tenant_changed", "high", msg, "metadata/labels") if {
	lib.operation == "UPDATE"
	lib.old_tenant != ""
	lib.old_tenant != lib.tenant_name
	msg := sprintf(
		"%s belongs to tenant %s and this update would move it to tenant %s; keep mm2gov.io/tenant=%s (and the namespace), or delete the object and create it anew for %s",
		[lib.subject, lib.old_tenant, lib.tenant_name, lib.old_tenant, lib.tenant_name],
	)
}
