# Tests of mirrormaker_connections.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# ---- Connect group and topics ------------------------------------------------

test_foreign_connect_group_fires if {
	d := t.decide(req({"target": {"groupId": "mm2gov.marketing-cloud-to-onprem.connect"}}, {}, {}))
	t.rules(d) == {"admission_mm2_connect_names"}
	t.hits(d, "admission_mm2_connect_names") == {"spec/target/groupId"}
	t.message(d, "admission_mm2_connect_names") == "KafkaMirrorMaker2 payments-onprem-to-cloud: Connect groupId 'mm2gov.marketing-cloud-to-onprem.connect' is not under one of tenant payments's MirrorMaker 2 prefixes (mm2gov.payments-onprem-to-cloud.), so it can be shared with another MirrorMaker 2; name it under its flow's prefix, e.g. 'mm2gov.payments-onprem-to-cloud.connect'"
}

test_default_connect_names_fire if {
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.remove(target, ["statusStorageTopic"])})))
	t.hits(d, "admission_mm2_connect_names") == {"spec/target/statusStorageTopic"}
	contains(t.message(d, "admission_mm2_connect_names"), "statusStorageTopic unset (Strimzi then uses a default every MirrorMaker 2 shares)")
}

test_connect_names_without_flows if {
	no_flows := fx.repo([object.union(fx.payments, {"flows": []})])
	d := t.decide_in(with_mirror({}), no_flows)
	some v in d.violations
	v.location == "spec/target/groupId"
	contains(v.message, "prefixes (none: the tenant declares no flow)")
	contains(v.message, "e.g. 'mm2gov.payments-<source>-to-<target>.connect'")
}

test_legacy_connect_cluster_checked if {
	d := t.decide(legacy_req(object.union(legacy_spec, {"connectCluster": "onprem"})))
	t.hits(d, "admission_mm2_connect_names") == {"spec/clusters/0/groupId", "spec/clusters/0/configStorageTopic", "spec/clusters/0/offsetStorageTopic", "spec/clusters/0/statusStorageTopic"}
	d2 := t.decide(legacy_req(object.union(legacy_spec, {"connectCluster": "elsewhere"})))
	t.hits(d2, "admission_mm2_cluster_unknown") == {"spec/connectCluster"}
	t.hits(d2, "admission_mm2_connect_names") == {"spec/target/groupId", "spec/target/configStorageTopic", "spec/target/offsetStorageTopic", "spec/target/statusStorageTopic"}
}

test_legacy_shape_without_connect_cluster if {
	d := t.decide(legacy_req(object.remove(legacy_spec, ["connectCluster"])))
	t.hits(d, "admission_mm2_cluster_unknown") == {"spec/connectCluster"}
	t.hits(d, "admission_mm2_connect_names") == {"spec/target/groupId", "spec/target/configStorageTopic", "spec/target/offsetStorageTopic", "spec/target/statusStorageTopic"}
}

# ---- where: bootstrap servers and TLS ----------------------------------------

test_bootstrap_servers_of_the_cluster_pass if {
	t.decide(req({"target": {"bootstrapServers": " CLOUD:9093 "}}, {}, {})).allowed
}

test_foreign_bootstrap_servers_fire if {
	d := t.decide(req({"target": {"bootstrapServers": "cloud:9093,evil.example:9093"}}, {}, {}))
	t.rules(d) == {"admission_mm2_bootstrap_servers"}
	t.hits(d, "admission_mm2_bootstrap_servers") == {"spec/target/bootstrapServers"}
	d.violations[0].severity == "critical"
	t.message(d, "admission_mm2_bootstrap_servers") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target connects to cluster cloud through evil.example:9093, which clusters.yaml does not list for it; list only cluster cloud's own bootstrap servers (cloud:9093), as clusters.yaml does"
	other := t.decide(with_mirror({"source": {"bootstrapServers": "cloud:9093"}}))
	t.hits(other, "admission_mm2_bootstrap_servers") == {"spec/mirrors/0/source/bootstrapServers"}
}

test_missing_bootstrap_servers_fire if {
	no_servers := object.union(target, {"bootstrapServers": 7})
	d := t.decide(spec_req(object.union(good_spec, {"target": no_servers})))
	t.rules(d) == {"admission_mm2_bootstrap_servers"}
	contains(t.message(d, "admission_mm2_bootstrap_servers"), "connects to cluster cloud with no bootstrapServers")
}

# The servers the webhook sent count, never a list the policy would split itself.
test_bootstrap_servers_come_from_the_webhook if {
	d := t.decide(object.union(with_mirror({}), {"bootstrap_servers": {"spec/target/bootstrapServers": ["x:1"]}}))
	t.hits(d, "admission_mm2_bootstrap_servers") == {"spec/target/bootstrapServers"}
	d2 := t.decide(object.union(with_mirror({}), {"bootstrap_servers": {"spec/mirrors/0/source/bootstrapServers": "onprem:9093"}}))
	t.hits(d2, "admission_mm2_bootstrap_servers") == {"spec/mirrors/0/source/bootstrapServers"}
}

test_legacy_cluster_bootstrap_checked if {
	bad := object.union(legacy_spec, {"clusters": [object.union(legacy_cluster("onprem"), {"bootstrapServers": "cloud:9093"}), legacy_spec.clusters[1]]})
	d := t.decide(legacy_req(bad))
	t.hits(d, "admission_mm2_bootstrap_servers") == {"spec/clusters/0/bootstrapServers"}
	extra := object.union(legacy_spec, {"clusters": array.concat(legacy_spec.clusters, [legacy_cluster("elsewhere")])})
	t.hits(t.decide(legacy_req(extra)), "admission_mm2_cluster_unknown") == {"spec/clusters/2/alias"}
}

test_missing_tls_fires if {
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.remove(target, ["tls"])})))
	t.rules(d) == {"admission_mm2_tls"}
	t.hits(d, "admission_mm2_tls") == {"spec/target/tls"}
	t.message(d, "admission_mm2_tls") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target connects to cluster cloud (SASL_SSL) without tls; add tls.trustedCertificates: [{secretName: cluster-ca, certificate: ca.crt}]"
}

test_another_clusters_ca_fires if {
	other := object.union(fx.base, {"clusters": {"onprem": {"security": {"ca_secret": "onprem-ca"}}}})
	d := t.decide_in(with_mirror({}), other)
	t.rules(d) == {"admission_mm2_tls"}
	t.hits(d, "admission_mm2_tls") == {"spec/mirrors/0/source/tls/trustedCertificates/0/secretName"}
	t.message(d, "admission_mm2_tls") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source trusts secret 'cluster-ca' for cluster onprem, whose CA is in onprem-ca; trust the cluster's own CA"
	t.decide(req({"target": {"tls": {"trustedCertificates": [{"pattern": "*"}]}}}, {}, {})).allowed == false
}
