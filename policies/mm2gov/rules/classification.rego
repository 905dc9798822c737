# What a tenant's classification allows its flows to do.
package mm2gov.rules.classification

import data.mm2gov.lib.input as lib

# Transport a confidential or restricted tenant's data may use.
strong_protocols := {"SASL_SSL", "SSL"}

strong_tls_versions := {"TLSv1.2", "TLSv1.3"}

violations contains lib.violation("restricted_to_cloud", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	tenant.classification == "restricted"
	some i, flow in tenant.flows
	input.clusters[flow.target].zone == "cloud"
	msg := sprintf(
		"tenant %s is restricted but flow %s replicates to %s, a cluster in zone cloud; restricted data stays off the cloud, so remove the flow or target a cluster outside zone cloud",
		[name, lib.flow_id(flow), flow.target],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/target", [name, i]))
}

violations contains lib.violation("restricted_to_cloud", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	tenant.classification == "restricted"
	some i, alias in object.get(tenant, "clusters", [])
	input.clusters[alias].zone == "cloud"
	msg := sprintf(
		"tenant %s is restricted but lists %s, a cluster in zone cloud, among the clusters its topics live on; restricted data stays off the cloud, so remove %s from its clusters",
		[name, alias, alias],
	)
	loc := lib.location(sprintf("tenants/%s/clusters/%d", [name, i]))
}

violations contains lib.violation("confidential_weak_transport", "high", name, msg, loc) if {
	some name, tenant in input.tenants
	tenant.classification in {"confidential", "restricted"}
	some i, flow in tenant.flows
	some end in ["source", "target"]
	alias := flow[end]
	weak := weak_clusters[alias]
	msg := sprintf(
		"tenant %s is %s but flow %s uses cluster %s (its %s), which %s; move the cluster to SASL_SSL or SSL with tls_min_version TLSv1.2 or newer, or keep this tenant's data off it",
		[name, tenant.classification, lib.flow_id(flow), alias, end, weak],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/%s", [name, i, end]))
}

# weak_clusters[alias] = why the cluster's transport is too weak for
# confidential data, for the clusters where it is.
weak_clusters := {alias: weakness(cluster.security) |
	some alias, cluster in input.clusters
	weakness(cluster.security)
}

weakness(security) := sprintf("uses %s without TLS", [security.protocol]) if {
	not security.protocol in strong_protocols
} else := sprintf("allows %s", [security.tls_min_version]) if {
	not security.tls_min_version in strong_tls_versions
}
