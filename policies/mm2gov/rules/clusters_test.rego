package mm2gov.rules.clusters_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.clusters

with_security(alias, security) := object.union(fx.base, {"clusters": {alias: {"security": security}}})

test_tls_clusters_pass if {
	vs := clusters.violations with input as fx.base
	vs == set()
}

test_plaintext_cluster_fires if {
	vs := clusters.violations with input as with_security("onprem", {"protocol": "PLAINTEXT", "sasl_mechanism": null})
	fx.hits(vs, "cluster_plaintext") == {["", "clusters.yaml:6"]}
	some v in vs
	v.severity == "high"
	v.message == "cluster onprem uses PLAINTEXT: records and credentials cross the network unencrypted; use SSL"
}

test_sasl_plaintext_cluster_fires if {
	vs := clusters.violations with input as with_security("cloud", {"protocol": "SASL_PLAINTEXT"})
	fx.hits(vs, "cluster_plaintext") == {["", "clusters.yaml:14"]}
	fx.hits(vs, "cluster_sasl_plain_without_tls") == set()
}

test_sasl_plain_over_tls_pass if {
	vs := clusters.violations with input as with_security("cloud", {"sasl_mechanism": "PLAIN"})
	vs == set()
}

test_sasl_plain_without_tls_fires if {
	vs := clusters.violations with input as with_security("cloud", {"protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN"})
	fx.hits(vs, "cluster_sasl_plain_without_tls") == {["", "clusters.yaml:15"]}
	fx.hits(vs, "cluster_plaintext") == set() # subsumed by the critical rule
	some v in vs
	v.rule == "cluster_sasl_plain_without_tls"
	v.severity == "critical"
	contains(v.message, "cluster cloud uses SASL mechanism PLAIN over SASL_PLAINTEXT")
}
