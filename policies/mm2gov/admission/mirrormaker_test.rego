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
	t.rules(d) == {"admission_tenant_unknown", "admission_tenant_label_mismatch"}
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

nothing := {"regex": "", "case_insensitive": false, "alternatives": [{"literal_prefix": "", "exact": true}]}

test_every_comma_item_is_checked if {
	both := {
		"regex": "pay.*|payments\\.x",
		"case_insensitive": false,
		"alternatives": [{"literal_prefix": "pay", "exact": false}, {"literal_prefix": "", "exact": false}, {"literal_prefix": "payments.x", "exact": true}],
	}
	d := decide_mirror({"topicsPattern": "payments\\.orders.*, pay.*|payments\\.x ,"}, {"pay.*|payments\\.x": both, "": nothing})
	t.rules(d) == {"admission_mm2_topics_outside_scope"}
	contains(t.message(d, "admission_mm2_topics_outside_scope"), "starting with 'pay' or any text, outside")
}

test_exact_alternatives_inside_pass if {
	exact := {"regex": "payments\\.refunds", "case_insensitive": false, "alternatives": [{"literal_prefix": "payments.refunds", "exact": true}]}
	nothing := {"regex": "^$", "case_insensitive": false, "alternatives": [{"literal_prefix": "", "exact": true}]}
	d := decide_mirror({"topicsPattern": "payments\\.refunds", "groupsPattern": "^$"}, {"payments\\.refunds": exact, "^$": nothing})
	d.allowed
}

# Kafka's LIST type reads " , " as two empty items: MM2 then matches only the
# empty name, which no topic has.
test_empty_items_match_nothing if {
	decide_mirror({"topicsPattern": " , "}, {"": nothing}).allowed
	d := decide_mirror({"topicsPattern": " , "}, {})
	t.rules(d) == {"admission_mm2_pattern_refused"}
}

# A pattern field that is set but was not sent split is one item without facts.
test_unsplit_field_is_refused if {
	two := req({}, {"topicsPattern": "payments\\.orders.*,payments\\.refunds"}, {"payments\\.refunds": t.facts("payments\\.refunds", "payments.refunds")})
	t.decide(two).allowed
	d := t.decide(object.union(two, {"mirror_patterns": [{}]}))
	t.rules(d) == {"admission_mm2_pattern_refused"}
	t.hits(d, "admission_mm2_pattern_refused") == {"spec/mirrors/0/topicsPattern"}
}

test_missing_topics_pattern_fires if {
	every absent in [{"topicsPattern": ""}, {"topicsPattern": 7}] {
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
	no_groups := object.remove(mirror, ["groupsPattern", "checkpointConnector"])
	t.decide(req({"mirrors": [no_groups]}, {}, {})).allowed
}

test_missing_groups_pattern_with_checkpoints_fires if {
	no_groups := object.union(object.remove(mirror, ["groupsPattern"]), {"checkpointConnector": {"config": {"emit.checkpoints.enabled": "false"}}})
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
	config := object.remove(mirror.sourceConnector.config, ["offset-syncs.topic.location"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_offset_syncs_location"}
	t.hits(d, "admission_mm2_offset_syncs_location") == {"spec/mirrors/0/sourceConnector/config/offset-syncs.topic.location"}
	contains(t.message(d, "admission_mm2_offset_syncs_location"), "unset (MM2's default is source)")
	d2 := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true, "offset-syncs.topic.location": "source"})))
	contains(t.message(d2, "admission_mm2_offset_syncs_location"), "offset-syncs.topic.location 'source'")
}

test_replication_policy_mismatch_fires if {
	d := t.decide(with_mirror(connector({"replication.policy.class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"})))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.message(d, "admission_mm2_replication_policy") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 sourceConnector uses replication.policy.class 'io.mm2gov.replication.FlowIdentityReplicationPolicy', but tenant payments's flow onprem -> cloud uses the default policy with its own MirrorMaker 2 topics; set replication.policy.class: io.mm2gov.replication.FlowReplicationPolicy"
}

# Kafka's own classes name offset syncs and checkpoints per cluster alias: refused, even the flow's kind.
test_kafka_replication_policy_fires if {
	d := t.decide(with_mirror({"checkpointConnector": {"config": {"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"}}}))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
}

test_default_replication_policy_when_unset if {
	config := object.remove(mirror.sourceConnector.config, ["replication.policy.class"])
	unset := spec_req(object.union(good_spec, {"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]}))
	d := t.decide(unset)
	t.rules(d) == {"admission_mm2_replication_policy"}
	contains(t.message(d, "admission_mm2_replication_policy"), "uses replication.policy.class 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy'")
}

test_identity_flow_needs_flow_identity_policy if {
	identity_flow := object.union(fx.payments.flows[0], {"replication_policy": "identity", "replication_policy_class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"})
	identity := fx.repo([object.union(fx.payments, {"flows": [identity_flow]})])
	d := t.decide_in(with_mirror({}), identity)
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/sourceConnector/config/replication.policy.class", "spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
	policy := {"replication.policy.class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"}
	t.decide_in(with_mirror({"sourceConnector": {"config": policy}, "checkpointConnector": {"config": policy}}), identity).allowed
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

# References are not literal credentials, but none of these keys is allowed.
test_config_references_are_refused_as_keys if {
	config := {
		"config.providers": "secrets",
		"config.providers.secrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
		"ssl.keystore.location": "/opt/kafka/keystore.p12",
		"ssl.truststore.password": "${secrets:kafka-cloud/cloud-ca:ca.password}",
		"ssl.key.password": null,
		"ssl.keystore.password": "",
		"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="${dir:/opt/secrets/s:password}";`,
	}
	d := t.decide(req({"target": {"config": config}}, {}, {}))
	t.rules(d) == {"admission_mm2_config_key"}
	count(t.hits(d, "admission_mm2_config_key")) == 7
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
	t.rules(d) == {"admission_mm2_inline_credentials", "admission_mm2_config_key"}
	t.hits(d, "admission_mm2_config_key") == t.hits(d, "admission_mm2_inline_credentials")
	t.hits(d, "admission_mm2_inline_credentials") == {
		"spec/mirrors/0/source/config/ssl.truststore.password",
		"spec/mirrors/0/source/config/sasl.jaas.config",
		"spec/mirrors/0/source/config/SSL.KEYSTORE.KEY",
		"spec/mirrors/0/source/config/ssl.key",
		"spec/mirrors/0/source/config/client.secret",
	}
	every v in d.violations {
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
	t.rules(d) == {"admission_mm2_inline_credentials", "admission_mm2_authentication"}
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/password"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/password"}
}

# Each type takes its own fields only: OAuth's secrets and token endpoint cannot ride along.
test_fields_of_another_type_fire if {
	oauth := {"accessToken": {"secretName": "scram-cloud-mm2-payments-onprem-to-cloud", "key": "k"}, "tokenEndpointUri": "https://x"}
	d := t.decide(req({"target": {"authentication": oauth}}, {}, {}))
	t.rules(d) == {"admission_mm2_authentication"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/accessToken", "spec/target/authentication/tokenEndpointUri"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/authentication sets tokenEndpointUri, which authentication type scram-sha-512 does not take (it takes passwordSecret, type, username); remove it"
}

# A CA certificate is no password.
test_ca_as_password_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "cluster-ca", "password": "ca.password"}}}}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
}

test_scram_without_password_secret_fires if {
	no_secret := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["passwordSecret"])})
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": no_secret})))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
	d2 := t.decide(req({"target": {"authentication": {"passwordSecret": "scram-cloud-x"}}}, {}, {}))
	t.hits(d2, "admission_mm2_inline_credentials") == {"spec/target/authentication/passwordSecret"}
}

test_tls_authentication_pass if {
	tls_auth := {"type": "tls", "certificateAndKey": {"secretName": "tls-cloud-mm2-payments-onprem-to-cloud", "certificate": "user.crt", "key": "user.key"}}
	t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.union(object.remove(target, ["authentication"]), {"authentication": tls_auth})}))).allowed
}

test_foreign_user_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"username": "marketing-app"}}}))
	t.rules(d) == {"admission_mm2_foreign_user"}
	t.hits(d, "admission_mm2_foreign_user") == {"spec/mirrors/0/source/authentication/username"}
	t.message(d, "admission_mm2_foreign_user") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source/authentication logs in as 'marketing-app', which is not the MirrorMaker 2 user of the flow it serves (mm2-payments-onprem-to-cloud); log in as the flow's MirrorMaker 2 user"
	d2 := t.decide(with_mirror({"source": {"authentication": {"username": "payments-app"}}}))
	t.rules(d2) == {"admission_mm2_foreign_user"}
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

# ---- where: bootstrap servers and TLS ------------------------------------------------

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

# ---- as whom: authentication --------------------------------------------------------

test_missing_authentication_fires if {
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.remove(target, ["authentication"])})))
	t.rules(d) == {"admission_mm2_authentication"}
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication"}
	contains(t.message(d, "admission_mm2_authentication"), "has no authentication, so MirrorMaker 2 connects anonymously")
}

test_custom_and_oauth_authentication_fire if {
	every type in ["custom", "oauth", "scram-sha-1"] {
		d := t.decide(req({"target": {"authentication": {"type": type}}}, {}, {}))
		t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/type"}
	}
	custom := {"type": "custom", "sasl": true, "config": {"sasl.mechanism": "PLAIN"}}
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": object.union(object.remove(target, ["authentication"]), {"authentication": custom})})))
	t.hits(d, "admission_mm2_authentication") == {"spec/target/authentication/type"}
	contains(t.message(d, "admission_mm2_authentication"), "has type 'custom', which mm2gov does not issue credentials for")
	untyped := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["type"])})
	d2 := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": untyped})))
	contains(t.message(d2, "admission_mm2_authentication"), "has type unset")
}

test_plain_and_scram_256_pass if {
	t.decide(req({"target": {"authentication": {"type": "plain"}}}, {}, {})).allowed
	t.decide(req({"target": {"authentication": {"type": "scram-sha-256"}}}, {}, {})).allowed
}

test_missing_username_fires if {
	no_user := object.union(object.remove(target, ["authentication"]), {"authentication": object.remove(auth("cloud"), ["username"])})
	d := t.decide(spec_req(object.union(object.remove(good_spec, ["target"]), {"target": no_user})))
	t.rules(d) == {"admission_mm2_foreign_user"}
	contains(t.message(d, "admission_mm2_foreign_user"), "logs in as unset")
}

# ---- Secrets -----------------------------------------------------------------------------

test_foreign_password_secret_fires if {
	d := t.decide(with_mirror({"source": {"authentication": {"passwordSecret": {"secretName": "scram-onprem-payments-app"}}}}))
	t.rules(d) == {"admission_mm2_foreign_secret"}
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/mirrors/0/source/authentication/passwordSecret/secretName"}
	d.violations[0].severity == "critical"
	startswith(t.message(d, "admission_mm2_foreign_secret"), "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source/authentication/passwordSecret/secretName names secret 'scram-onprem-payments-app', which is not one of the flow's MirrorMaker 2 Secrets it may use there (scram-cloud-mm2-payments-onprem-to-cloud")
}

test_tls_certificate_of_another_user_fires if {
	tls_auth := {"type": "tls", "certificateAndKey": {"secretName": "tls-cloud-mm2-marketing-cloud-to-onprem", "certificate": "user.crt", "key": "user.key"}}
	d := t.decide(req({"target": {"authentication": tls_auth}}, {}, {}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/target/authentication/certificateAndKey/secretName"}
}

test_trusted_certificates_checked if {
	trusted := {"trustedCertificates": [{"secretName": "scram-cloud-payments-app", "certificate": "password"}, {"pattern": "*", "certificate": "ca.crt"}]}
	d := t.decide(req({"target": {"tls": trusted}}, {}, {}))
	t.rules(d) == {"admission_mm2_foreign_secret", "admission_mm2_tls"}
	t.hits(d, "admission_mm2_tls") == {"spec/target/tls/trustedCertificates/0/secretName"}
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/target/tls/trustedCertificates/0/secretName", "spec/target/tls/trustedCertificates/1/pattern"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/tls/trustedCertificates/1/pattern trusts every Secret matching '*', which can be any Secret of the namespace; name the cluster's CA Secret (secretName) instead"
}

template := {
	"pod": {"volumes": [
		{"name": "own", "secret": {"secretName": "scram-cloud-mm2-payments-onprem-to-cloud"}},
		{"name": "theirs", "secret": {"secretName": "scram-cloud-marketing-app"}},
		{"name": "projected", "projected": {"sources": [{"secret": {"name": "cluster-admin"}}]}},
		{"name": "csi", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "scram-onprem-marketing-app"}}},
	]},
	"connectContainer": {"env": [
		{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "scram-cloud-payments-app", "key": "password"}}},
		{"name": "OWN", "valueFrom": {"secretKeyRef": {"name": "scram-onprem-mm2-payments-onprem-to-cloud", "key": "password"}}},
	]},
}

test_template_secrets_checked if {
	d := t.decide(req({"template": template}, {}, {}))
	t.rules(d) == {"admission_mm2_foreign_secret", "admission_mm2_admin_credentials"}
	t.hits(d, "admission_mm2_foreign_secret") == {
		"spec/template/pod/volumes/1/secret/secretName",
		"spec/template/pod/volumes/3/csi/nodePublishSecretRef/name",
		"spec/template/connectContainer/env/0/valueFrom/secretKeyRef/name",
	}
	t.hits(d, "admission_mm2_admin_credentials") == {"spec/template/pod/volumes/2/projected/sources/0/secret/name"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/template/pod/volumes/2/projected/sources/0/secret/name names secret cluster-admin, which holds cluster cloud's admin credentials or CA key and would bypass every ACL; use the flow's MirrorMaker 2 credentials"
}

test_external_configuration_checked if {
	external := {"externalConfiguration": {
		"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "scram-cloud-marketing-app", "key": "password"}}}],
		"volumes": [{"name": "v", "secret": {"secretName": "tls-cloud-payments-app"}}],
	}}
	d := t.decide(req(external, {}, {}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/externalConfiguration/env/0/valueFrom/secretKeyRef/name", "spec/externalConfiguration/volumes/0/secret/secretName"}
}

# Secret references come from the webhook (it finds them wherever they are).
test_secret_refs_come_from_the_webhook if {
	d := t.decide(object.union(with_mirror({}), {"secret_refs": [["spec/anywhere/secretName", "scram-cloud-marketing-app", "secretName"], "garbage", [1, 2]]}))
	t.hits(d, "admission_mm2_foreign_secret") == {"spec/anywhere/secretName"}
}

# ---- config maps ----------------------------------------------------------------------

test_allowed_config_keys_pass if {
	worker := {"config.storage.replication.factor": 3, "offset.flush.interval.ms": "10000", "connector.client.config.override.policy": "None", "request.timeout.ms": 30000}
	connector_config := object.union(mirror.sourceConnector.config, {"replication.factor": 3, "sync.topic.configs.enabled": true, "offset.lag.max": 100})
	t.decide(req({"target": {"config": worker}}, {"sourceConnector": {"config": connector_config}, "source": {"config": {"metadata.max.age.ms": 1000}}}, {})).allowed
}

test_connection_changing_keys_fire if {
	keys := {
		"bootstrap.servers": "evil:9093", "source.consumer.bootstrap.servers": "evil:9093", "source.admin.sasl.mechanism": "PLAIN",
		"target.producer.security.protocol": "PLAINTEXT", "producer.override.bootstrap.servers": "evil:9093",
		"consumer.override.sasl.jaas.config": "${secrets:x/y:z}", "admin.override.ssl.truststore.location": "/x",
		"security.protocol": "PLAINTEXT", "ssl.endpoint.identification.algorithm": "", "config.providers": "env",
		"connector.client.config.override.policy": "All", "key.converter": "x",
	}
	d := t.decide(with_mirror({"sourceConnector": {"config": object.union(mirror.sourceConnector.config, keys)}}))
	t.rules(d) == {"admission_mm2_config_key"}
	count(t.hits(d, "admission_mm2_config_key")) == count(keys)
	some v in d.violations
	contains(v.message, "mm2gov does not allow in a connector config")
	d2 := t.decide(req({"target": {"config": {"bootstrap.servers": "evil:9093", "replication.policy.class": "x"}}}, {}, {}))
	t.hits(d2, "admission_mm2_config_key") == {"spec/target/config/bootstrap.servers", "spec/target/config/replication.policy.class"}
	d3 := t.decide(with_mirror({"source": {"config": {"replication.factor": 3}}}))
	t.hits(d3, "admission_mm2_config_key") == {"spec/mirrors/0/source/config/replication.factor"}
}

test_config_values_checked if {
	d := t.decide(req({"target": {"config": {"connector.client.config.override.policy": "All", "request.timeout.ms": "${env:TIMEOUT}", "retry.backoff.ms": [1]}}}, {}, {}))
	t.rules(d) == {"admission_mm2_config_value"}
	t.hits(d, "admission_mm2_config_value") == {"spec/target/config/connector.client.config.override.policy", "spec/target/config/request.timeout.ms", "spec/target/config/retry.backoff.ms"}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/config key connector.client.config.override.policy is not None: with another policy, connectors may override their clients' connection settings; set it to None or remove it"
	t.decide(req({"target": {"config": {"connector.client.config.override.policy": "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy"}}}, {}, {})).allowed
}

test_heartbeat_connector_policy_checked if {
	t.decide(with_mirror({"heartbeatConnector": {"config": {"emit.heartbeats.enabled": false}}})).allowed
	t.decide(with_mirror({"heartbeatConnector": {"config": flow_policy}})).allowed
	d := t.decide(with_mirror({"heartbeatConnector": {"config": {"replication.policy.class": "com.example.Custom"}}}))
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/heartbeatConnector/config/replication.policy.class"}
}

# ---- pod overrides ---------------------------------------------------------------------

test_name_resolution_overrides_fire if {
	pod := {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["cloud"]}], "dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.0.0.53"], "searches": [], "options": [{"name": "ndots", "value": "1"}]}}
	d := t.decide(req({"template": {"pod": pod}}, {}, {}))
	t.rules(d) == {"admission_mm2_pod_override"}
	t.hits(d, "admission_mm2_pod_override") == {"spec/template/pod/hostAliases", "spec/template/pod/dnsPolicy", "spec/template/pod/dnsConfig/nameservers"}
	t.decide(req({"template": {"pod": {"hostAliases": [], "dnsPolicy": "ClusterFirst", "dnsConfig": {"options": []}}}}, {}, {})).allowed
}

test_process_environment_overrides_fire if {
	env := [{"name": "JAVA_TOOL_OPTIONS", "value": "-Djava.security.auth.login.config=/tmp/x"}, {"name": "kafka_opts", "value": "x"}, {"name": "TZ", "value": "UTC"}, "garbage"]
	d := t.decide(req({"template": {"connectContainer": {"env": env}}, "externalConfiguration": {"env": [{"name": "CLASSPATH", "value": "/x"}]}}, {}, {}))
	t.rules(d) == {"admission_mm2_pod_override"}
	t.hits(d, "admission_mm2_pod_override") == {"spec/template/connectContainer/env/0/name", "spec/template/connectContainer/env/1/name", "spec/externalConfiguration/env/0/name"}
}

test_system_properties_checked if {
	properties := [{"name": "java.net.preferIPv4Stack", "value": "true"}, {"name": "javax.net.ssl.trustStore", "value": "/x"}, "garbage"]
	d := t.decide(req({"jvmOptions": {"javaSystemProperties": properties}}, {}, {}))
	t.rules(d) == {"admission_mm2_pod_override"}
	t.hits(d, "admission_mm2_pod_override") == {"spec/jvmOptions/javaSystemProperties/1/name", "spec/jvmOptions/javaSystemProperties/2/name"}
	some v in d.violations
	contains(v.message, "Java system property unset may change")
}

test_another_clusters_ca_fires if {
	other := object.union(fx.base, {"clusters": {"onprem": {"security": {"ca_secret": "onprem-ca"}}}})
	d := t.decide_in(with_mirror({}), other)
	t.rules(d) == {"admission_mm2_tls"}
	t.hits(d, "admission_mm2_tls") == {"spec/mirrors/0/source/tls/trustedCertificates/0/secretName"}
	t.message(d, "admission_mm2_tls") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/source trusts secret 'cluster-ca' for cluster onprem, whose CA is in onprem-ca; trust the cluster's own CA"
	t.decide(req({"target": {"tls": {"trustedCertificates": [{"pattern": "*"}]}}}, {}, {})).allowed == false
}

test_shared_internal_topics_fire if {
	# a heartbeat connector with Kafka's policy writes the shared `heartbeats`
	d := t.decide(with_mirror({"heartbeatConnector": {}}))
	t.rules(d) == {"admission_mm2_replication_policy", "admission_mm2_shared_internal_topics"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/heartbeatConnector/config/replication.policy.class"}
	count(t.hits(d, "admission_mm2_shared_internal_topics")) == 4
}

# Tenant payments points its checkpoints at marketing's flow's topic, its offset syncs at MM2's shared name,
# and leaves its heartbeats topic unset: each refused, at the key.
test_foreign_flow_topics_fire if {
	foreign := {
		"mm2gov.flow.checkpoints.topic": "mm2gov.marketing-onprem-to-cloud.checkpoints",
		"mm2gov.flow.offset-syncs.topic": "mm2-offset-syncs.cloud.internal",
	}
	checkpoint := object.remove(object.union(mirror.checkpointConnector.config, foreign), ["mm2gov.flow.heartbeats.topic"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": checkpoint}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_shared_internal_topics"}
	t.hits(d, "admission_mm2_shared_internal_topics") == {
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.checkpoints.topic",
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.offset-syncs.topic",
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.heartbeats.topic",
	}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector has mm2gov.flow.checkpoints.topic 'mm2gov.marketing-onprem-to-cloud.checkpoints', but tenant payments's flow onprem -> cloud names its own MirrorMaker 2 topics: another value writes or reads another flow's offset syncs, checkpoints or heartbeats, or topics every flow between these clusters shares; set mm2gov.flow.checkpoints.topic: mm2gov.payments-onprem-to-cloud.checkpoints"
	some u in d.violations
	contains(u.message, "mm2gov.flow.heartbeats.topic unset")
	d2 := t.decide(with_mirror(connector({"mm2gov.flow.id": "marketing-onprem-to-cloud"})))
	t.hits(d2, "admission_mm2_shared_internal_topics") == {"spec/mirrors/0/sourceConnector/config/mm2gov.flow.id"}
}

# The checkpoint connector reads offset syncs where the location says: on the target, as the source connector writes them.
test_checkpoint_offset_syncs_location_fires if {
	config := object.remove(mirror.checkpointConnector.config, ["offset-syncs.topic.location"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": config}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_offset_syncs_location"}
	t.hits(d, "admission_mm2_offset_syncs_location") == {"spec/mirrors/0/checkpointConnector/config/offset-syncs.topic.location"}
	off := object.union(config, {"emit.checkpoints.enabled": "false"})
	t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": off}})]}, {}, {})).allowed
}

test_switch_that_is_not_a_boolean_fires if {
	d := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": "attacker.example:9093"})))
	t.rules(d) == {"admission_mm2_config_value"}
	t.message(d, "admission_mm2_config_value") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/sourceConnector/config key emit.offset-syncs.enabled is not a boolean; set it to true or false"
	t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true}))).allowed
}

test_sync_topic_acls_on_other_connectors_fires if {
	d := t.decide(with_mirror({"checkpointConnector": {"config": {"sync.topic.acls.enabled": "true"}}}))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	t.message(d, "admission_mm2_sync_topic_acls") == `KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector sets sync.topic.acls.enabled 'true'; mm2gov's ACLs are the only ones: set it to "false" or remove it`
	t.decide(with_mirror({"checkpointConnector": {"config": {"sync.topic.acls.enabled": false}}})).allowed
}

# ---- delivery ------------------------------------------------------------------

# payments' flow as mm2gov generates it with delivery exactly_once (compile/strimzi.py).
eos_target := {"target": {"config": {"exactly.once.source.support": "enabled"}}}

eos_source := {"sourceConnector": {"config": {
	"exactly.once.support": "required",
	"source.consumer.isolation.level": "read_committed",
}}}

test_exactly_once_flow_as_generated_pass if {
	t.decide_in(req(eos_target, eos_source, {}), fx.exactly_once_base) == {"allowed": true, "violations": []}
}

test_exactly_once_flow_without_its_settings_fires if {
	d := t.decide_in(req({}, {}, {}), fx.exactly_once_base)
	t.rules(d) == {"admission_mm2_delivery"}
	t.hits(d, "admission_mm2_delivery") == {
		"spec/target/config/exactly.once.source.support",
		"spec/mirrors/0/sourceConnector/config/source.consumer.isolation.level",
	}
	some v in d.violations
	v.location == "spec/target/config/exactly.once.source.support"
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: Connect config exactly.once.source.support is 'disabled', but tenant payments's flow payments-onprem-to-cloud has delivery exactly_once; set exactly.once.source.support: enabled"
}

test_exactly_once_flow_reading_uncommitted_fires if {
	uncommitted := {"sourceConnector": {"config": {"source.consumer.isolation.level": "read_uncommitted"}}}
	d := t.decide_in(req(eos_target, uncommitted, {}), fx.exactly_once_base)
	t.hits(d, "admission_mm2_delivery") == {"spec/mirrors/0/sourceConnector/config/source.consumer.isolation.level"}
	contains(t.message(d, "admission_mm2_delivery"), "records of aborted transactions would be copied")
	preparing := {"target": {"config": {"exactly.once.source.support": "preparing"}}}
	t.hits(t.decide_in(req(preparing, eos_source, {}), fx.exactly_once_base), "admission_mm2_delivery") == {"spec/target/config/exactly.once.source.support"}
}

# An at_least_once flow's MM2 has no transactional id: turning transactions on
# (or "preparing", whose leader is transactional) is refused, "disabled" is not.
test_at_least_once_flow_turning_exactly_once_on_fires if {
	d := t.decide(req(eos_target, {}, {}))
	t.rules(d) == {"admission_mm2_delivery"}
	t.hits(d, "admission_mm2_delivery") == {"spec/target/config/exactly.once.source.support"}
	t.message(d, "admission_mm2_delivery") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/config sets exactly.once.source.support 'enabled', but tenant payments's flow payments-onprem-to-cloud has delivery at_least_once: its MirrorMaker 2 is granted no transactional id; remove the key, or set delivery: exactly_once on the flow in tenants/payments.yaml"
	t.rules(t.decide(req({"target": {"config": {"exactly.once.source.support": "Preparing"}}}, {}, {}))) == {"admission_mm2_delivery"}
	t.rules(t.decide(req({"target": {"config": {"exactly.once.source.support": true}}}, {}, {}))) == {"admission_mm2_delivery"}
	t.decide(req({"target": {"config": {"exactly.once.source.support": "disabled"}}}, {}, {})).allowed
}

# Reading committed records only is harmless on any flow; other values are not Kafka's.
test_isolation_level_values if {
	t.decide(req({}, eos_source, {})).allowed
	d := t.decide(req({}, {"sourceConnector": {"config": {"source.consumer.isolation.level": "dirty"}}}, {}))
	t.rules(d) == {"admission_mm2_config_value"}
	contains(t.message(d, "admission_mm2_config_value"), "is neither read_committed nor read_uncommitted")
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
