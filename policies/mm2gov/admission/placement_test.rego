package mm2gov.admission.rules.placement_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# payments is restricted here; cloud is the cloud zone, onprem and dr are not.
restricted := object.union(fx.base, {"tenants": {"payments": {"classification": "restricted"}}})

topic(cluster, namespace) := object.union(
	t.request("KafkaTopic", "payments.orders", "payments", {"metadata": {"name": "payments.orders", "labels": {"strimzi.io/cluster": cluster}}}),
	{"namespace": namespace},
)

user(cluster) := t.request("KafkaUser", "payments-app", "payments", {
	"metadata": {"name": "payments-app", "labels": {"strimzi.io/cluster": cluster}},
	"spec": {"authorization": {"type": "simple", "acls": []}},
})

test_restricted_on_premises_pass if {
	t.decide_in(topic("onprem", "kafka-onprem"), restricted).allowed
	t.decide_in(user("dr"), restricted).allowed
}

test_restricted_on_cloud_fires if {
	d := t.decide_in(topic("cloud", "kafka-cloud"), restricted)
	t.rules(d) == {"admission_restricted_on_cloud"}
	t.hits(d, "admission_restricted_on_cloud") == {"metadata/labels/strimzi.io~1cluster"}
	d.violations[0].severity == "critical"
	t.message(d, "admission_restricted_on_cloud") == "KafkaTopic payments.orders of restricted tenant payments is labelled strimzi.io/cluster=cloud, which is cluster cloud in zone cloud; restricted tenants' users and topics stay off cloud clusters: label it with one of the tenant's on-premises clusters"
	t.rules(t.decide_in(user("cloud"), restricted)) == {"admission_restricted_on_cloud"}
}

# A label that designates a cloud cluster anywhere is refused, whatever the namespace.
test_restricted_on_a_cloud_cluster_in_another_namespace_fires if {
	t.rules(t.decide_in(topic("cloud", "kafka-onprem"), restricted)) == {"admission_restricted_on_cloud"}
}

test_restricted_without_a_known_cluster_fires if {
	d := t.decide_in(topic("my-cluster", "kafka-onprem"), restricted)
	t.rules(d) == {"admission_restricted_on_cloud"}
	contains(t.message(d, "admission_restricted_on_cloud"), "has strimzi.io/cluster 'my-cluster', which names no cluster of clusters.yaml")
	unlabelled := t.request("KafkaTopic", "payments.orders", "payments", {"metadata": {"name": "payments.orders"}})
	contains(t.message(t.decide_in(unlabelled, restricted), "admission_restricted_on_cloud"), "has strimzi.io/cluster unset")
}

test_other_tenants_anywhere_pass if {
	t.decide(topic("cloud", "kafka-cloud")).allowed
	t.decide(topic("my-cluster", "x")).allowed
}
