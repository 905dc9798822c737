package mm2gov.admission.rules.topics_test

import data.mm2gov.admission.lib_test as t

kafka_topic(name, topic_name, cluster) := {
	"apiVersion": "kafka.strimzi.io/v1",
	"kind": "KafkaTopic",
	"metadata": {"name": name, "namespace": "kafka-cloud", "labels": cluster_label(cluster)},
	"spec": {"topicName": topic_name, "config": {}},
}

cluster_label("") := {}

cluster_label(cluster) := {"strimzi.io/cluster": cluster} if cluster != ""

decide(tenant, name, topic_name, cluster) := t.decide(t.request("KafkaTopic", name, tenant, kafka_topic(name, topic_name, cluster)))

test_own_topic_pass if {
	decide("payments", "payments.orders", "payments.orders", "onprem").allowed
	decide("payments", "payments.orders", "payments.orders", "").allowed
}

test_remote_topic_on_its_target_pass if {
	decide("payments", "onprem.payments.orders", "onprem.payments.orders", "cloud").allowed
}

test_internal_topic_on_its_target_pass if {
	decide("payments", "mm2gov.payments-onprem-to-cloud.configs", "mm2gov.payments-onprem-to-cloud.configs", "cloud").allowed
}

test_remote_topic_without_cluster_label_pass if {
	decide("payments", "onprem.payments.orders", "onprem.payments.orders", "").allowed
	decide("payments", "onprem.payments.orders", "onprem.payments.orders", "my-strimzi-cluster").allowed
}

test_remote_topic_on_another_cluster_fires if {
	d := decide("payments", "onprem.payments.orders", "onprem.payments.orders", "dr")
	t.rules(d) == {"admission_topic_outside_scope"}
	t.hits(d, "admission_topic_outside_scope") == {"spec/topicName"}
	t.message(d, "admission_topic_outside_scope") == "KafkaTopic onprem.payments.orders: topic 'onprem.payments.orders' is outside tenant payments's topic names on cluster dr (payments.); name it under one of those prefixes, e.g. 'payments.<name>'"
}

test_other_tenants_topic_fires if {
	d := decide("payments", "marketing.leads", "marketing.leads", "")
	t.rules(d) == {"admission_topic_outside_scope"}
	d.violations[0].severity == "high"
	contains(t.message(d, "admission_topic_outside_scope"), "outside tenant payments's topic names (mm2gov.payments-onprem-to-cloud., onprem.payments., payments.)")
}

test_prefix_without_separator_fires if {
	d := decide("payments", "paymentsx", "paymentsx", "onprem")
	t.rules(d) == {"admission_topic_outside_scope"}
}

test_topic_name_wins_over_object_name if {
	d := decide("payments", "payments.orders", "marketing.leads", "onprem")
	t.rules(d) == {"admission_topic_outside_scope"}
	obj := {"metadata": {"name": "marketing.leads"}, "spec": {"partitions": 3}}
	d2 := t.decide(t.request("KafkaTopic", "marketing.leads", "payments", obj))
	t.hits(d2, "admission_topic_outside_scope") == {"metadata/name"}
}

test_identity_flow_keeps_names if {
	decide("marketing", "marketing.leads", "marketing.leads", "onprem").allowed
}
