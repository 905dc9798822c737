# ACME's own rule, added to the built-in library: owners must be ACME addresses.
package mm2gov.rules.acme_owners

import data.mm2gov.lib.input as lib

violations contains lib.violation("acme_owner_domain", "medium", name, msg, lib.location(path)) if {
	some name, tenant in input.tenants
	some i, owner in tenant.owners
	not endswith(owner, "@acme.example")
	path := sprintf("tenants/%s/owners/%d", [name, i])
	msg := sprintf("tenant %s: owner %s is not an @acme.example address; owners must be reachable inside ACME", [name, owner])
}
