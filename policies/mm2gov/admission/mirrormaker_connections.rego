# Where a KafkaMirrorMaker2 connects: its Connect group and topics under its
# flow's own prefix, the declared clusters' own bootstrap servers, and TLS to a
# cluster that speaks it, trusting that cluster's CA.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- Connect group and topics ------------------------------------------------

connect_fields := ["groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"]

# Connect's group and topics left at Strimzi's defaults ("mirrormaker2-cluster",
# ...) or named outside the flow's `mm2gov.<flow-id>.` prefix are shared with,
# or taken from, another tenant's MirrorMaker 2: it would join that Connect
# cluster and run or rewrite its connectors.
violations contains lib.violation("admission_mm2_connect_names", "high", msg, path) if {
	checked
	[connect, base] := connect_spec
	some field in connect_fields
	value := object.get(connect, field, "")
	not lib.inside(value, lib.internal_prefixes)
	path := lib.pointer(array.concat(base, [field]))
	msg := sprintf(
		"%s: Connect %s %s is not under one of tenant %s's MirrorMaker 2 prefixes (%s), so it can be shared with another MirrorMaker 2; name it under its flow's prefix, e.g. '%s%s'",
		[lib.subject, field, connect_value_text(value), lib.tenant_name, none_text(lib.internal_prefixes), example_internal, connect_suffix[field]],
	)
}

connect_value_text(value) := "unset (Strimzi then uses a default every MirrorMaker 2 shares)" if {
	value == ""
} else := sprintf("'%v'", [value])

connect_suffix := {"groupId": "connect", "configStorageTopic": "configs", "offsetStorageTopic": "offsets", "statusStorageTopic": "status"}

example_internal := sort(lib.internal_prefixes)[0] if {
	count(lib.internal_prefixes) > 0
} else := sprintf("mm2gov.%s-<source>-to-<target>.", [lib.tenant_name])

none_text(items) := lib.text_list(items) if {
	count(items) > 0
} else := "none: the tenant declares no flow"

# ---- where: bootstrap servers and TLS ----------------------------------------

# The bootstrap servers mm2gov's webhook read from a connection, as Kafka's
# LIST type splits them (lower-cased host:port items); [] when unset.
bootstrap_items(segments) := items if {
	items := input.bootstrap_servers[lib.pointer(array.concat(segments, ["bootstrapServers"]))]
	is_array(items)
} else := []

# A declared cluster's own bootstrap servers (clusters.yaml, split by mm2gov).
cluster_servers(cluster) := {lower(item) | some item in cluster.bootstrap_server_list; is_string(item)}

# Where MirrorMaker 2 connects: only the servers clusters.yaml gives the alias.
# Another address (another cluster, a proxy, the same host under another
# name) could carry the tenant's data, and its MM2 credentials, anywhere.
violations contains lib.violation("admission_mm2_bootstrap_servers", "critical", msg, path) if {
	checked
	some [_, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	servers := bootstrap_items(segments)
	own := cluster_servers(cluster)
	foreign := [sprintf("%v", [item]) | some item in servers; not item in own]
	problem := servers_problem(servers, foreign)
	path := lib.pointer(array.concat(segments, ["bootstrapServers"]))
	msg := sprintf(
		"%s: %s connects to cluster %s %s; list only cluster %s's own bootstrap servers (%s), as clusters.yaml does",
		[lib.subject, lib.pointer(segments), alias, problem, alias, lib.text_list(own)],
	)
}

servers_problem(servers, foreign) := "with no bootstrapServers" if {
	count(servers) == 0
} else := sprintf("through %s, which clusters.yaml does not list for it", [concat(", ", foreign)]) if {
	count(foreign) > 0
}

# A cluster that speaks TLS is reached with TLS: without `tls` Strimzi connects
# in plain text, and SASL credentials cross the network unencrypted.
violations contains lib.violation("admission_mm2_tls", "high", msg, path) if {
	checked
	some [connection, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	cluster.security.protocol in {"SSL", "SASL_SSL"}
	not is_object(object.get(connection, "tls", null))
	path := lib.pointer(array.concat(segments, ["tls"]))
	msg := sprintf(
		"%s: %s connects to cluster %s (%s) without tls; add tls.trustedCertificates: [{secretName: %v, certificate: ca.crt}]",
		[lib.subject, lib.pointer(segments), alias, cluster.security.protocol, cluster.security.ca_secret],
	)
}

# Whom MirrorMaker 2 trusts as the cluster: that cluster's CA, not another
# cluster's (a server with a certificate from another CA of the estate could
# stand in for it).
violations contains lib.violation("admission_mm2_tls", "high", msg, path) if {
	checked
	some [connection, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	some i, trusted in connection.tls.trustedCertificates
	secret := field_of(trusted, "secretName")
	secret != null
	secret != cluster.security.ca_secret
	path := lib.pointer(array.concat(segments, ["tls", "trustedCertificates", i, "secretName"]))
	msg := sprintf(
		"%s: %s trusts secret '%v' for cluster %s, whose CA is in %v; trust the cluster's own CA",
		[lib.subject, lib.pointer(segments), secret, alias, cluster.security.ca_secret],
	)
}
