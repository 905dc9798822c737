# A principal belongs to exactly one tenant and names one user.
package mm2gov.rules.principals

import data.mm2gov.lib.input as lib

violations contains lib.violation("principal_in_two_tenants", "high", name, msg, loc) if {
	count(shared) > 0
	declared_by := lib.principal_tenants
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	principal.name in shared
	others := declared_by[principal.name] - {name}
	count(others) > 0
	msg := sprintf(
		"tenant %s: principal %s is also declared by tenant %s, so it would get the ACLs of both tenants; give each tenant its own principal",
		[name, principal.name, concat(", ", sort(others))],
	)
	loc := lib.location(sprintf("tenants/%s/principals/%d/name", [name, i]))
}

# Principal names that two tenants declare: one sort and a pass over
# neighbours, so the full index is built only when there is one.
shared := lib.shared_texts({[principal.name, name] |
	some name, tenant in input.tenants
	some principal in tenant.principals
})

violations contains lib.violation("principal_wildcard", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	contains(principal.name, "*")
	msg := sprintf(
		"tenant %s: principal %s contains '*', so the tenant's ACLs would apply to every user; name one principal, e.g. User:%s-app",
		[name, principal.name, name],
	)
	loc := lib.location(sprintf("tenants/%s/principals/%d/name", [name, i]))
}

# Strimzi names a KafkaUser by its user name, and Kubernetes names are lower-case DNS subdomains: a principal
# whose user name is not one (governance/model/names.py is_k8s_name, sent as `kubernetes_name`) cannot be a
# KafkaUser on a cluster Strimzi manages, where the tenant's principals get their ACLs (its clusters and its
# flows' targets). Its name would also name a generated file.
violations contains lib.violation("principal_not_kubernetes_name", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	principal.kubernetes_name == false
	managed := sort({alias |
		some alias in principal_clusters(tenant)
		object.get(object.get(input.clusters, alias, {}), "strimzi_namespace", null) != null
	})
	count(managed) > 0
	msg := sprintf(
		"tenant %s: principal %s gets ACLs on %s, which Strimzi manages: a KafkaUser is named by its user name, and Kubernetes names are lower-case letters, digits, '-' and '.' (at most 253); rename the principal, e.g. User:%s-app",
		[name, principal.name, concat(", ", managed), name],
	)
	loc := lib.location(sprintf("tenants/%s/principals/%d/name", [name, i]))
}

principal_clusters(tenant) := {c | some c in lib.home_clusters(tenant)} | {f.target | some f in tenant.flows}
