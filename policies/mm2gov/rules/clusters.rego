# Cluster transport: the rules apply to every tenant, so their tenant is "".
package mm2gov.rules.clusters

import data.mm2gov.lib.input as lib

violations contains lib.violation("cluster_plaintext", "high", "", msg, loc) if {
	some alias, cluster in input.clusters
	cluster.security.protocol in {"PLAINTEXT", "SASL_PLAINTEXT"}
	not plain_without_tls(cluster.security) # the critical rule below says it all
	msg := sprintf(
		"cluster %s uses %s: records and credentials cross the network unencrypted; use %s",
		[alias, cluster.security.protocol, tls_protocol(cluster.security.protocol)],
	)
	loc := lib.location(sprintf("clusters/%s/security/protocol", [alias]))
}

violations contains lib.violation("cluster_sasl_plain_without_tls", "critical", "", msg, loc) if {
	some alias, cluster in input.clusters
	plain_without_tls(cluster.security)
	msg := sprintf(
		"cluster %s uses SASL mechanism PLAIN over SASL_PLAINTEXT: passwords cross the network in clear text; use SASL_SSL, or SCRAM-SHA-512 at least",
		[alias],
	)
	loc := lib.location(sprintf("clusters/%s/security/sasl_mechanism", [alias]))
}

plain_without_tls(security) if {
	security.protocol == "SASL_PLAINTEXT"
	security.sasl_mechanism == "PLAIN"
}

tls_protocol("PLAINTEXT") := "SSL"

tls_protocol("SASL_PLAINTEXT") := "SASL_SSL"
