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

violations contains lib.violation("admission_tenant_missing", "high", msg, "metadata/labels") if {
	lib.input_is_object
	lib.tenant_name == ""
	not lib.cluster_ca_secret
	msg := sprintf(
		"%s in namespace %s has no tenant: neither the object nor its namespace carries the label mm2gov.io/tenant; label the namespace or the object mm2gov.io/tenant=<tenant>",
		[lib.subject, lib.string_field("namespace")],
	)
}

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
