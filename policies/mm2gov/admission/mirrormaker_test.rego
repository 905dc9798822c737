# Tests of mirrormaker.rego, and the fixtures every mirrormaker*_test.rego of this
# package builds on (payments' flow onprem -> cloud as mm2gov generates it).
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# ---- fixtures: payments' flow onprem -> cloud as mm2gov generates it ---------

auth(alias) := {
	"type": "scram-sha-512",
	"username": "mm2-payments-onprem-to-cloud",
	"passwordSecret": {"secretName": sprintf("scram-%s-mm2-payments-onprem-to-cloud", [alias]), "password": "password"},
}

internal := "mm2gov.payments-onprem-to-cloud."

# What both connectors carry to use the flow's own MirrorMaker 2 topics.
flow_policy := {
	"replication.policy.class": "io.mm2gov.replication.FlowReplicationPolicy",
	"mm2gov.flow.id": "payments-onprem-to-cloud",
	"mm2gov.flow.offset-syncs.topic": concat("", [internal, "offset-syncs"]),
	"mm2gov.flow.checkpoints.topic": concat("", [internal, "checkpoints"]),
	"mm2gov.flow.heartbeats.topic": concat("", [internal, "heartbeats"]),
}

tls := {"trustedCertificates": [{"secretName": "cluster-ca", "certificate": "ca.crt"}]}

target := {
	"alias": "cloud",
	"bootstrapServers": "cloud:9093",
	"tls": tls,
	"authentication": auth("cloud"),
	"groupId": concat("", [internal, "connect"]),
	"configStorageTopic": concat("", [internal, "configs"]),
	"offsetStorageTopic": concat("", [internal, "offsets"]),
	"statusStorageTopic": concat("", [internal, "status"]),
	"config": {"config.storage.replication.factor": -1},
}

mirror := {
	"source": {"alias": "onprem", "bootstrapServers": "onprem:9093", "tls": tls, "authentication": auth("onprem")},
	"sourceConnector": {"tasksMax": 1, "config": object.union(flow_policy, {
		"sync.topic.acls.enabled": "false",
		"emit.offset-syncs.enabled": "true",
		"offset-syncs.topic.location": "target",
	})},
	"checkpointConnector": {"tasksMax": 1, "config": object.union(flow_policy, {
		"offset-syncs.topic.location": "target",
		"emit.checkpoints.enabled": "true",
		"sync.group.offsets.enabled": "true",
	})},
	"topicsPattern": "payments\\.orders.*",
	"topicsExcludePattern": "__.*",
	"groupsPattern": "payments-.*",
}

patterns := {
	"payments\\.orders.*": t.facts("payments\\.orders.*", "payments.orders"),
	"__.*": t.facts("__.*", "__"),
	"payments-.*": t.facts("payments-.*", "payments-"),
}

mm2(spec) := {
	"apiVersion": "kafka.strimzi.io/v1",
	"kind": "KafkaMirrorMaker2",
	"metadata": {"name": "payments-onprem-to-cloud", "namespace": "kafka-cloud", "labels": {"mm2gov.io/tenant": "payments"}},
	"spec": spec,
}

good_spec := {"replicas": 1, "target": target, "mirrors": [mirror]}

# A request for payments' MM2 whose spec is good_spec changed by `spec_patch`,
# whose first mirror is `mirror` changed by `mirror_patch`, with `more` patterns.
req(spec_patch, mirror_patch, more) := object.union(
	t.request("KafkaMirrorMaker2", "payments-onprem-to-cloud", "payments", mm2(object.union(
		object.union(good_spec, {"mirrors": [object.union(mirror, mirror_patch)]}),
		spec_patch,
	))),
	{"patterns": object.union(object.remove(patterns, object.keys(more)), more)},
)

# A request with exactly this spec (object.union cannot remove keys).
spec_req(spec) := object.union(
	t.request("KafkaMirrorMaker2", "payments-onprem-to-cloud", "payments", mm2(spec)),
	{"patterns": patterns},
)

with_mirror(mirror_patch) := req({}, mirror_patch, {})

decide_mirror(mirror_patch, more) := t.decide(req({}, mirror_patch, more))

connector(config) := {"sourceConnector": {"config": config}}

# ---- the generated shape -----------------------------------------------------

test_generated_shape_pass if {
	d := t.decide(with_mirror({}))
	d == {"allowed": true, "violations": []}
}

test_delete_skips_content if {
	bad := object.union(req({"target": {"alias": "nowhere"}}, {}, {}), {"operation": "DELETE"})
	t.decide(bad).allowed
}

test_unknown_tenant_checks_nothing_else if {
	d := t.decide(object.union(with_mirror({"topicsPattern": ".*"}), {"tenant": "nobody"}))
	t.rules(d) == {"admission_tenant_unknown", "admission_tenant_label_mismatch"}
}

# ---- shape -------------------------------------------------------------------

test_malformed_spec_fires if {
	d := t.decide(t.request("KafkaMirrorMaker2", "x", "payments", {"spec": "mirror everything"}))
	t.hits(d, "admission_object_malformed") == {"spec"}
	not d.allowed
}

test_missing_or_empty_mirrors_fire if {
	d := t.decide(req({"mirrors": []}, {}, {}))
	t.hits(d, "admission_object_malformed") == {"spec/mirrors"}
	d2 := t.decide(t.request("KafkaMirrorMaker2", "x", "payments", {"spec": {"target": {"alias": "cloud"}}}))
	t.hits(d2, "admission_object_malformed") == {"spec/mirrors"}
	not d2.allowed
}

test_malformed_mirrors_fire if {
	d := t.decide(req({"mirrors": {"0": mirror}}, {}, {}))
	t.hits(d, "admission_object_malformed") == {"spec/mirrors"}
	d2 := t.decide(req({"mirrors": [mirror, "x"]}, {}, {}))
	t.rules(d2) == {"admission_object_malformed"}
	t.hits(d2, "admission_object_malformed") == {"spec/mirrors/1"}
}

# Both shapes in one object: the legacy (v1beta2) fields are the generated flow's own, the v1 spec.target
# names another flow's Connect group. Judged by one shape, it would pass; it is refused as ambiguous.
test_both_shapes_in_one_object_are_refused if {
	other := object.union(target, {"groupId": "mm2gov.marketing-onprem-to-cloud.connect"})
	mixed := object.union(legacy_spec, {"target": other})
	d := t.decide(legacy_req(mixed))
	not d.allowed
	t.hits(d, "admission_mm2_ambiguous_shape") == {"spec"}
	some v in d.violations
	v.rule == "admission_mm2_ambiguous_shape"
	contains(v.message, "mixes Strimzi's v1 fields (spec.target) with v1beta2 fields (spec.clusters, spec.connectCluster, spec.mirrors[0].sourceCluster, spec.mirrors[0].targetCluster)")

	# a v1 mirror's source beside v1beta2 clusters is ambiguous too
	d2 := t.decide(req({"connectCluster": "cloud"}, {}, {}))
	t.hits(d2, "admission_mm2_ambiguous_shape") == {"spec"}
}

test_each_shape_alone_is_not_ambiguous if {
	t.hits(t.decide(legacy_req(legacy_spec)), "admission_mm2_ambiguous_shape") == set()
	t.hits(t.decide(with_mirror({})), "admission_mm2_ambiguous_shape") == set()
}

version_req(version, ok) := object.union(req({"version": version}, {}, {}), {"mm2_version_ok": ok, "mm2_min_version": "3.1"})

test_a_mirror_maker_older_than_the_per_flow_policy_is_refused if {
	d := t.decide(version_req("3.0.0", false))
	t.hits(d, "admission_mm2_version") == {"spec/version"}
	some v in d.violations
	v.rule == "admission_mm2_version"
	contains(v.message, "spec.version 3.0.0 is not a Kafka release at or after 3.1")
	t.decide(version_req("4.1.0", true)).allowed
	t.decide(req({}, {}, {})).allowed # unset: the operator's default release
}

# ---- v1beta2 shape -----------------------------------------------------------

legacy_cluster(alias) := {"alias": alias, "bootstrapServers": sprintf("%s:9093", [alias]), "tls": tls, "authentication": auth(alias)}

legacy_spec := {
	"replicas": 1,
	"connectCluster": "cloud",
	"clusters": [
		legacy_cluster("onprem"),
		object.union(legacy_cluster("cloud"), {
			"groupId": concat("", [internal, "connect"]),
			"configStorageTopic": concat("", [internal, "configs"]),
			"offsetStorageTopic": concat("", [internal, "offsets"]),
			"statusStorageTopic": concat("", [internal, "status"]),
		}),
	],
	"mirrors": [object.union(object.remove(mirror, ["source"]), {"sourceCluster": "onprem", "targetCluster": "cloud"})],
}

legacy_req(spec) := object.union(
	t.request("KafkaMirrorMaker2", "payments-onprem-to-cloud", "payments", mm2(spec)),
	{"patterns": patterns},
)

test_legacy_shape_pass if {
	t.decide(legacy_req(legacy_spec)).allowed
	no_target := object.union(legacy_spec, {"mirrors": [object.remove(legacy_spec.mirrors[0], ["targetCluster"])]})
	t.decide(legacy_req(no_target)).allowed
}

test_legacy_unknown_clusters_fire if {
	bad := object.union(legacy_spec, {"mirrors": [object.union(legacy_spec.mirrors[0], {"sourceCluster": "elsewhere", "targetCluster": 3})]})
	d := t.decide(legacy_req(bad))
	t.rules(d) == {"admission_mm2_cluster_unknown"}
	t.hits(d, "admission_mm2_cluster_unknown") == {"spec/mirrors/0/sourceCluster", "spec/mirrors/0/targetCluster"}
}

# ---- clusters and flows ------------------------------------------------------

test_unknown_source_cluster_fires if {
	d := decide_mirror({"source": {"alias": "elsewhere"}}, {})
	t.rules(d) == {"admission_mm2_cluster_unknown"}
	t.hits(d, "admission_mm2_cluster_unknown") == {"spec/mirrors/0/source/alias"}
	t.message(d, "admission_mm2_cluster_unknown") == "KafkaMirrorMaker2 payments-onprem-to-cloud: source cluster alias 'elsewhere' is not a cluster of clusters.yaml (cloud, dr, onprem); use one of those aliases, or add the cluster to clusters.yaml first"
}

test_unknown_target_cluster_fires if {
	d := t.decide(req({"target": {"alias": "elsewhere"}}, {}, {}))
	t.rules(d) == {"admission_mm2_cluster_unknown"}
	t.hits(d, "admission_mm2_cluster_unknown") == {"spec/target/alias"}
}

test_mirror_without_source_alias_fires if {
	d := t.decide(req({"mirrors": [object.remove(mirror, ["source"])]}, {}, {}))
	t.hits(d, "admission_mm2_cluster_unknown") == {"spec/mirrors/0/source/alias"}
}

test_undeclared_flow_fires if {
	d := t.decide(req({"target": {"alias": "dr", "bootstrapServers": "dr:9093"}}, {}, {}))
	t.rules(d) == {"admission_mm2_flow_undeclared"}
	t.hits(d, "admission_mm2_flow_undeclared") == {"spec/mirrors/0"}
	t.message(d, "admission_mm2_flow_undeclared") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 replicates onprem -> dr, which is not a flow of tenant payments (its flows: onprem -> cloud); declare the flow in tenants/payments.yaml first, or mirror one of its flows"
}

test_undeclared_flow_of_tenant_without_flows if {
	no_flows := fx.repo([object.union(fx.payments, {"flows": []})])
	d := t.decide_in(with_mirror({}), no_flows)
	contains(t.message(d, "admission_mm2_flow_undeclared"), "(its flows: none)")
}
