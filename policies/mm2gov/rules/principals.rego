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
