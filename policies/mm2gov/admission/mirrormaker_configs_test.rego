# Tests of mirrormaker_configs.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t

# ---- config maps -------------------------------------------------------------

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

test_switch_that_is_not_a_boolean_fires if {
	d := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": "attacker.example:9093"})))
	t.rules(d) == {"admission_mm2_config_value"}
	t.message(d, "admission_mm2_config_value") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/mirrors/0/sourceConnector/config key emit.offset-syncs.enabled is not a boolean; set it to true or false"
	t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true}))).allowed
}

# ---- credentials in config maps ----------------------------------------------

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

test_legacy_cluster_credentials_checked if {
	bad := object.union(legacy_spec, {"clusters": [object.union(legacy_cluster("onprem"), {"config": {"sasl.jaas.config": "x password=plain;"}})]})
	d := t.decide(legacy_req(bad))
	t.hits(d, "admission_mm2_inline_credentials") == {"spec/clusters/0/config/sasl.jaas.config"}
}
