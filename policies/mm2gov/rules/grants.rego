# Grants let another tenant read some of the granting tenant's topics: only
# read, only to a known tenant, only inside the granting tenant's prefixes.
# Only grants none of these rules object to appear in scopes.
package mm2gov.rules.grants

import data.mm2gov.lib.input as lib

violations contains lib.violation("grant_unknown_tenant", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, grant in tenant.grants
	not input.tenants[grant.to]
	msg := sprintf(
		"tenant %s: grant to '%s' names a tenant that does not exist (tenants: %s); fix the name or remove the grant",
		[name, grant.to, concat(", ", sort(object.keys(input.tenants)))],
	)
	loc := lib.location(sprintf("tenants/%s/grants/%d/to", [name, i]))
}

violations contains lib.violation("grant_write", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, grant in tenant.grants
	some k, access in grant.access
	access != "read"
	msg := sprintf(
		"tenant %s: grant to %s gives '%s' access; grants may only give 'read' (another tenant never writes into %s's topics), so remove '%s'",
		[name, grant.to, access, name, access],
	)
	loc := lib.location(sprintf("tenants/%s/grants/%d/access/%d", [name, i, k]))
}

violations contains lib.violation("grant_wildcard", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, grant in tenant.grants
	some j, topic in grant.topics
	topic in lib.wildcard_grant_topics
	msg := sprintf(
		"tenant %s: grant to %s has topic '%s', which opens every topic of the cluster; grant a prefix inside %s's topic prefixes %s, e.g. '%spublic.'",
		[name, grant.to, topic, name, lib.list_text(tenant.topic_prefixes), first_prefix(name, tenant)],
	)
	loc := lib.location(sprintf("tenants/%s/grants/%d/topics/%d", [name, i, j]))
}

violations contains lib.violation("grant_outside_scope", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, grant in tenant.grants
	some j, topic in grant.topics
	not topic in lib.wildcard_grant_topics # grant_wildcard reports those
	not strings.any_prefix_match(topic, tenant.topic_prefixes)
	msg := sprintf(
		"tenant %s: grant to %s has topic prefix '%s', which is not inside %s's topic prefixes %s; a tenant can only grant its own topics, so start it with one of them",
		[name, grant.to, topic, name, lib.list_text(tenant.topic_prefixes)],
	)
	loc := lib.location(sprintf("tenants/%s/grants/%d/topics/%d", [name, i, j]))
}

first_prefix(name, tenant) := tenant.topic_prefixes[0] if {
	count(tenant.topic_prefixes) > 0
} else := sprintf("%s.", [name])
