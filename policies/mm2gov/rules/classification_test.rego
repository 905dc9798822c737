package mm2gov.rules.classification_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.classification

restricted_flow(target) := fx.repo([object.union(fx.payments, {
	"classification": "restricted",
	"flows": [fx.flow("payments-onprem-to-x", "onprem", target, "default", [fx.pattern("payments\\..*", "payments.")], [])],
})])

test_restricted_onprem_flow_pass if {
	vs := classification.violations with input as restricted_flow("dr")
	fx.hits(vs, "restricted_to_cloud") == set()
}

test_confidential_to_cloud_pass if {
	vs := classification.violations with input as fx.base
	fx.hits(vs, "restricted_to_cloud") == set()
}

test_restricted_to_cloud_fires if {
	vs := classification.violations with input as restricted_flow("cloud")
	fx.hits(vs, "restricted_to_cloud") == {["payments", "tenants/payments.yaml:16"]}
	some v in vs
	v.severity == "critical"
	v.message == "tenant payments is restricted but flow payments-onprem-to-x replicates to cloud, a cluster in zone cloud; restricted data stays off the cloud, so remove the flow or target a cluster outside zone cloud"
}

test_confidential_on_strong_transport_pass if {
	vs := classification.violations with input as fx.base
	fx.hits(vs, "confidential_weak_transport") == set()
}

test_internal_on_weak_transport_pass if {
	weak := object.union(fx.base, {"clusters": {"cloud": {"security": {"protocol": "SASL_PLAINTEXT"}}}})
	vs := classification.violations with input as object.union(weak, {"tenants": {"payments": {"classification": "internal"}}})
	fx.hits(vs, "confidential_weak_transport") == set()
}

test_confidential_on_plaintext_fires if {
	weak := object.union(fx.base, {"clusters": {"cloud": {"security": {"protocol": "SASL_PLAINTEXT"}}}})
	vs := classification.violations with input as weak
	fx.hits(vs, "confidential_weak_transport") == {["payments", "tenants/payments.yaml:16"]}
	some v in vs
	v.severity == "high"
	v.message == "tenant payments is confidential but flow payments-onprem-to-cloud uses cluster cloud (its target), which uses SASL_PLAINTEXT without TLS; move the cluster to SASL_SSL or SSL with tls_min_version TLSv1.2 or newer, or keep this tenant's data off it"
}

test_restricted_on_old_tls_fires if {
	old := object.union(restricted_flow("dr"), {"clusters": {"onprem": {"security": {"tls_min_version": "TLSv1.1"}}}})
	vs := classification.violations with input as old
	fx.hits(vs, "confidential_weak_transport") == {["payments", "tenants/payments.yaml:15"]}
	some v in vs
	contains(v.message, "uses cluster onprem (its source), which allows TLSv1.1")
}

test_restricted_home_cluster_in_cloud_fires if {
	risk := fx.tenant("risk", {"classification": "restricted", "clusters": ["onprem", "cloud"]})
	vs := classification.violations with input as fx.repo([risk])
	fx.hits(vs, "restricted_to_cloud") == {["risk", "tenants/risk.yaml:1"]}
	some v in vs
	contains(v.message, "lists cloud, a cluster in zone cloud")
}

test_restricted_home_cluster_onprem_pass if {
	risk := fx.tenant("risk", {"classification": "restricted", "clusters": ["onprem"]})
	vs := classification.violations with input as fx.repo([risk])
	fx.hits(vs, "restricted_to_cloud") == set()
}
