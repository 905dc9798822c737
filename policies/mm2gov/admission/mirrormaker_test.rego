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

target := {
	"alias": "cloud",
	"bootstrapServers": "cloud:9093",
	"authentication": auth("cloud"),
	"groupId": concat("", [internal, "connect"]),
	"configStorageTopic": concat("", [internal, "configs"]),
	"offsetStorageTopic": concat("", [internal, "offsets"]),
	"statusStorageTopic": concat("", [internal, "status"]),
	"config": {"config.storage.replication.factor": -1},
}

mirror := {
	"source": {"alias": "onprem", "bootstrapServers": "onprem:9093", "authentication": auth("onprem")},
	"sourceConnector": {"tasksMax": 1, "config": {
		"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
		"sync.topic.acls.enabled": "false",
		"emit.offset-syncs.enabled": "false",
	}},
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

# ---- the generated shape ------------------------------------------------------

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
	t.rules(d) == {"admission_tenant_unknown"}
}

# ---- patterns ---------------------------------------------------------------------

test_refused_pattern_fires if {
	d := decide_mirror({"topicsExcludePattern": "__.*,\\p{L}x"}, {"\\p{L}x": {"error": "\\p{...} Unicode classes are Java-only"}})
	t.rules(d) == {"admission_mm2_pattern_refused"}
	t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/topicsExcludePattern"}
	contains(t.message(d, "admission_mm2_pattern_refused"), `topicsExcludePattern item '\p{L}x' cannot be checked (\p{...} Unicode classes are Java-only)`)
}

test_pattern_without_analysis_fires if {
	d := decide_mirror({"topicsPattern": "payments\\.new.*"}, {})
	t.rules(d) == {"admission_mm2_pattern_refused"}
	contains(t.message(d, "admission_mm2_pattern_refused"), "mm2gov's webhook sent no analysis of it")
}

test_incomplete_facts_are_refused if {
	every broken in [
		{"regex": "payments-.*", "case_insensitive": false},
		{"regex": "payments-.*", "case_insensitive": false, "alternatives": []},
		{"regex": "payments-.*", "case_insensitive": "no", "alternatives": [{"literal_prefix": "payments-", "exact": false}]},
		{"regex": "payments-.*", "case_insensitive": false, "alternatives": [{"literal_prefix": 1, "exact": false}]},
		"payments-",
	] {
		d := decide_mirror({}, {"payments-.*": broken})
		t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/groupsPattern"}
	}
}

test_topics_outside_scope_fires if {
	d := decide_mirror({"topicsPattern": "marketing\\..*"}, {"marketing\\..*": t.facts("marketing\\..*", "marketing.")})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	t.hits(d, "admission_mm2_topics_outside_scope") == {"spec/mirrors/0/topicsPattern"}
	d.violations[0].severity == "high"
	d.violations[0].tenant == "payments"
	t.message(d, "admission_mm2_topics_outside_scope") == `KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 topicsPattern regex 'marketing\..*' can match topic names starting with 'marketing.', outside tenant payments's topic prefixes [payments.]; anchor it at one of them, e.g. 'payments\..*'`
}

test_every_comma_item_is_checked if {
	both := {
		"regex": "pay.*|payments\\.x",
		"case_insensitive": false,
		"alternatives": [{"literal_prefix": "pay", "exact": false}, {"literal_prefix": "", "exact": false}, {"literal_prefix": "payments.x", "exact": true}],
	}
	d := decide_mirror({"topicsPattern": "payments\\.orders.*, pay.*|payments\\.x ,"}, {"pay.*|payments\\.x": both})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	contains(t.message(d, "admission_mm2_topics_outside_scope"), "starting with 'pay' or any text, outside")
}

test_exact_alternatives_inside_pass if {
	exact := {"regex": "payments\\.refunds", "case_insensitive": false, "alternatives": [{"literal_prefix": "payments.refunds", "exact": true}]}
	nothing := {"regex": "^$", "case_insensitive": false, "alternatives": [{"literal_prefix": "", "exact": true}]}
	d := decide_mirror({"topicsPattern": "payments\\.refunds", "groupsPattern": "^$"}, {"payments\\.refunds": exact, "^$": nothing})
	d.allowed
}

test_missing_topics_pattern_fires if {
	every absent in [{"topicsPattern": ""}, {"topicsPattern": " , "}, {"topicsPattern": 7}] {
		d := decide_mirror(absent, {})
		t.rules(d) == {"admission_mm2_topics_outside_scope"}
		contains(t.message(d, "admission_mm2_topics_outside_scope"), "mirror 0 has no topicsPattern, so MirrorMaker 2 uses its default '.*'")
	}
	no_field := object.remove(mirror, ["topicsPattern"])
	d := t.decide(req({"mirrors": [no_field]}, {}, {}))
	t.hits(d, "admission_mm2_topics_outside_scope") == {"spec/mirrors/0/topicsPattern"}
}

test_case_insensitive_topics_fire if {
	ci := object.union(t.facts("(?i)payments\\..*", "payments."), {"case_insensitive": true})
	d := decide_mirror({"topicsPattern": "(?i)payments\\..*"}, {"(?i)payments\\..*": ci})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	contains(t.message(d, "admission_mm2_topics_outside_scope"), "is case-insensitive ((?i)), so it can match other-case topic names")
}

test_groups_outside_scope_fires if {
	d := decide_mirror({"groupsPattern": ".*"}, {".*": t.facts(".*", "")})
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	t.hits(d, "admission_mm2_groups_outside_scope") == {"spec/mirrors/0/groupsPattern"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "can match group names starting with any text, outside tenant payments's group prefixes [payments-]; anchor it at one of them, e.g. 'payments-.*'")
}

test_case_insensitive_groups_fire if {
	ci := object.union(t.facts("(?i)payments-.*", "payments-"), {"case_insensitive": true})
	d := decide_mirror({"groupsPattern": "(?i)payments-.*"}, {"(?i)payments-.*": ci})
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
}

test_missing_groups_pattern_without_checkpoints_pass if {
	no_groups := object.remove(mirror, ["groupsPattern"])
	t.decide(req({"mirrors": [no_groups]}, {}, {})).allowed
}

test_missing_groups_pattern_with_checkpoints_fires if {
	no_groups := object.union(object.remove(mirror, ["groupsPattern"]), {"checkpointConnector": {"config": {}}})
	d := t.decide(req({"mirrors": [no_groups]}, {}, {}))
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "mirror 0 has no groupsPattern")
}

test_groups_without_group_prefixes_fire if {
	no_prefixes := fx.repo([object.union(fx.payments, {"group_prefixes": []})])
	d := t.decide_in(with_mirror({}), no_prefixes)
	t.rules(d) == {"admission_mm2_groups_outside_scope"}
	contains(t.message(d, "admission_mm2_groups_outside_scope"), "the tenant declares none, so mirror nothing ('^$')")
}

# ---- clusters and flows ---------------------------------------------------------

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
	d := t.decide(req({"target": {"alias": "dr"}}, {}, {}))
	t.rules(d) == {"admission_mm2_flow_undeclared"}
	t.hits(d, "admission_mm2_flow_undeclared") == {"spec/mirrors/0"}
	t.message(d, "admission_mm2_flow_undeclared") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 replicates onprem -> dr, which is not a flow of tenant payments (its flows: onprem -> cloud); declare the flow in tenants/payments.yaml first, or mirror one of its flows"
}

test_undeclared_flow_of_tenant_without_flows if {
	no_flows := fx.repo([object.union(fx.payments, {"flows": []})])
	d := t.decide_in(with_mirror({}), no_flows)
	contains(t.message(d, "admission_mm2_flow_undeclared"), "(its flows: none)")
}

# ---- connector settings ----------------------------------------------------------

test_sync_topic_acls_off_pass if {
	t.decide(with_mirror(connector({"sync.topic.acls.enabled": false}))).allowed
	t.decide(with_mirror(connector({"sync.topic.acls.enabled": "FALSE"}))).allowed
}

test_sync_topic_acls_on_fires if {
	d := t.decide(with_mirror(connector({"sync.topic.acls.enabled": "true"})))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	t.hits(d, "admission_mm2_sync_topic_acls") == {"spec/mirrors/0/sourceConnector/config/sync.topic.acls.enabled"}
	contains(t.message(d, "admission_mm2_sync_topic_acls"), "has sync.topic.acls.enabled 'true'")
}

test_sync_topic_acls_unset_fires if {
	config := object.remove(mirror.sourceConnector.config, ["sync.topic.acls.enabled"])
	d := t.decide(spec_req(object.union(good_spec, {"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]})))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	contains(t.message(d, "admission_mm2_sync_topic_acls"), "unset (MM2's default is true)")
}

test_no_source_connector_fires if {
	d := t.decide(req({"mirrors": [object.remove(mirror, ["sourceConnector"])]}, {}, {}))
	t.rules(d) == {"admission_mm2_sync_topic_acls", "admission_mm2_offset_syncs_location"}
}

test_offset_syncs_on_target_pass if {
	t.decide(with_mirror(connector({"emit.offset-syncs.enabled": "true", "offset-syncs.topic.location": "target"}))).allowed
}

test_offset_syncs_on_source_fires if {
	d := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true})))
	t.rules(d) == {"admission_mm2_offset_syncs_location"}
	t.hits(d, "admission_mm2_offset_syncs_location") == {"spec/mirrors/0/sourceConnector/config/offset-syncs.topic.location"}
	contains(t.message(d, "admission_mm2_offset_syncs_location"), "unset (MM2's default is source)")
	d2 := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true, "offset-syncs.topic.location": "source"})))
	contains(t.message(d2, "admission_mm2_offset_syncs_location"), "offset-syncs.topic.location 'source'")
}

test_replication_policy_mismatch_fires if {
	d := t.decide(with_mirror(connector({"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"})))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.message(d, "admission_mm2_replication_policy") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 sourceConnector uses replication.policy.class 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy', but tenant payments's flow onprem -> cloud uses the default policy; set replication.policy.class: org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
}

test_default_replication_policy_when_unset if {
	config := object.remove(mirror.sourceConnector.config, ["replication.policy.class"])
	unset := spec_req(object.union(good_spec, {"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]}))
	t.decide(unset).allowed
	identity := fx.repo([object.union(fx.payments, {"flows": [object.union(fx.payments.flows[0], {"replication_policy": "identity"})]})])
	d := t.decide_in(unset, identity)
	t.rules(d) == {"admission_mm2_replication_policy"}
}

test_checkpoint_connector_policy_checked if {
	checkpoints := {"checkpointConnector": {"config": {"replication.policy.class": "com.example.Custom"}}}
	d := t.decide(with_mirror(checkpoints))
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
}

test_replication_separator_fires if {
	t.decide(with_mirror(connector({"replication.policy.separator": "."}))).allowed
	d := t.decide(with_mirror(connector({"replication.policy.separator": "_"})))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/sourceConnector/config/replication.policy.separator"}
}

test_filter_overrides_fire if {
	d := t.decide(with_mirror(connector({"topics": ".*", "topic.filter.class": "com.example.All", "source.cluster.alias": "cloud"})))
	t.rules(d) == {"admission_mm2_filter_override"}
	t.hits(d, "admission_mm2_filter_override") == {
		"spec/mirrors/0/sourceConnector/config/topics",
		"spec/mirrors/0/sourceConnector/config/topic.filter.class",
		"spec/mirrors/0/sourceConnector/config/source.cluster.alias",
	}
	d2 := t.decide(with_mirror({"checkpointConnector": {"config": {"groups": ".*", "target.cluster.bootstrap.servers": "x:9092"}}}))
	t.hits(d2, "admission_mm2_filter_override") == {
		"spec/mirrors/0/checkpointConnector/config/groups",
		"spec/mirrors/0/checkpointConnector/config/target.cluster.bootstrap.servers",
	}
	some v in d2.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector config sets groups, which overrides what the spec says MirrorMaker 2 mirrors and between which clusters; remove it and use topicsPattern, groupsPattern and the spec's clusters"
}

# ---- Connect group and topics ------------------------------------------------------

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

# ---- credentials ---------------------------------------------------------------------

test_config_references_pass if {
	config := {
		"config.providers": "secrets",
		"config.providers.secrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
		"ssl.keystore.location": "/opt/kafka/keystore.p12",
		"ssl.truststore.password": "${secrets:kafka-cloud/cloud-ca:ca.password}",
		"ssl.key.password": null,
		"ssl.keystore.password": "",
		"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="${dir:/opt/secrets/s:password}";`,
	}
	t.decide(req({"target": {"config": config}}, {}, {})).allowed
}

test_literal_config_credentials_fire if {
	config := {
		"ssl.truststore.password": "changeit",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2";`,
		"SSL.KEYSTORE.KEY": "-----BEGIN PRIVATE KEY-----",
		"ssl.key": 12,
		"client.secret": "s3cr3t",
	}
	d := t.decide(with_mirror({"source": {"config": config}}))
	t.rules(d) == {"admission_mm2_inline_credentials"}
	t.hits(d, "admission_mm2_inline_credentials") == {
		"spec/mirrors/0/source/config/ssl.truststore.password",
		"spec/mirrors/0/source/config/sasl.jaas.config",
		"spec/mirrors/0/source/config/SSL.KEYSTORE.KEY",
		"spec/mirrors/0/source/config/ssl.key",
		"spec/mirrors/0/source/config/client.secret",
	}
	every v in d.violations {
		v.severity == "critical"
		not contains(v.message, "hunter2")
		not contains(v.message, "changeit")
	}
}

test_literal_connector_credentials_fire if {
	d := t.decide(with_mirror({"checkpointConnector": {"config": {"producer.override.ssl.key.password": "pw"}}, "groupsPattern": "payments-.*"}))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/mirrors/0/checkpointConnector/config/producer.override.ssl.key.password"}
	contains(t.message(d, "admission_mm2_inline_credentials"), "spec/mirrors/0/checkpointConnector/config sets producer.override.ssl.key.password to a literal value (not shown)")
}

test_inline_authentication_password_fires if {
	d := t.decide(req({"target": {"authentication": {"password": "hunter2"}}}, {}, {}))
	t.rules(d) == {"admission_mm2_inline_credentials"}
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/password"}
}

test_scram_without_password_secret_fires if {
	no_secret := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["passwordSecret"])})
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": no_secret})))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
	d2 := t.decide(req({"target": {"authentication": {"passwordSecret": "scram-cloud-x"}}}, {}, {}))
	t.hits(d2, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
}

test_tls_authentication_pass if {
	tls := {"type": "tls", "certificateAndKey": {"secretName": "tls-cloud-mm2-payments-onprem-to-cloud", "certificate": "user.crt", "key": "user.key"}}
	t.decide(req({"target": {"authentication": tls}}, {}, {})).allowed
}

test_foreign_user_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"username": "marketing-app"}}}))
	t.rules(d) == {"admission_mm2_foreign_user"}
	t.hits(d, "admission_mm2_foreign_user") == {"spec/mirrors/0/source/authentication/username"}
	t.message(d, "admission_mm2_foreign_user") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source/authentication logs in as 'marketing-app', which is not a user of tenant payments (mm2-payments-onprem-to-cloud, payments-app); log in as the flow's MirrorMaker 2 user mm2-<flow-id>"
}

test_admin_credentials_fire if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "cluster-admin"}}}}))
	t.rules(d) == {"admission_mm2_admin_credentials"}
	t.hits(d, "admission_mm2_admin_credentials") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
	d.violations[0].severity == "critical"
	tls := {"type": "tls", "certificateAndKey": {"secretName": "cluster-ca-key", "certificate": "ca.crt", "key": "ca.key"}}
	d2 := t.decide(req({"target": {"authentication": tls}}, {}, {}))
	t.hits(d2, "admission_mm2_admin_credentials") == {"spec/target/authentication/certificateAndKey/secretName"}
}

# ---- v1beta2 shape -----------------------------------------------------------------

legacy_cluster(alias) := {"alias": alias, "bootstrapServers": sprintf("%s:9093", [alias]), "authentication": auth(alias)}

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

test_legacy_cluster_credentials_checked if {
	bad := object.union(legacy_spec, {"clusters": [object.union(legacy_cluster("onprem"), {"config": {"sasl.jaas.config": "x password=plain;"}})]})
	d := t.decide(legacy_req(bad))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/clusters/0/config/sasl.jaas.config"}
}

# ---- shape -----------------------------------------------------------------------------

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
