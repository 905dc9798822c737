# The config maps Strimzi hands to Kafka clients, the Connect worker and the
# connectors: allow-listed keys with plain values, and no literal credential.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- config maps -------------------------------------------------------------

# The keys each kind of config map may set: an allow-list, because the keys
# that change where or as whom a client connects are many and open-ended
# (bootstrap.servers, security.protocol, sasl.*, ssl.*, client overrides such
# as source.consumer.*, producer.override.*, config providers, filter and
# policy classes, ...). Timeouts, replication factors and MM2's own switches
# change neither.
client_keys := {
	"request.timeout.ms", "default.api.timeout.ms", "retry.backoff.ms", "retry.backoff.max.ms",
	"reconnect.backoff.ms", "reconnect.backoff.max.ms", "metadata.max.age.ms", "connections.max.idle.ms",
	"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
}

allowed_keys := {
	"client": client_keys,
	"worker": ((client_keys | worker_keys) | object.get(table_keys, "worker", set())),
	"connector": (connector_keys | object.get(table_keys, "connector", set())),
}

# Besides the keys the settings table places in a config (table_keys), which
# are listed there only.
worker_keys := {
	"offset.storage.partitions", "status.storage.partitions", "offset.flush.interval.ms", "offset.flush.timeout.ms",
	"task.shutdown.graceful.timeout.ms", "scheduled.rebalance.max.delay.ms", "connector.client.config.override.policy",
}

# The flow's own policy class and mm2gov.flow.* keys (held to the flow's data in
# mirrormaker_settings.rego), and MM2's intervals, switches and timeouts the
# table leaves to MM2's defaults (emit.heartbeats.enabled and the heartbeats
# topic's replication factor only the dedicated-mode file sets).
connector_keys := {
	"replication.policy.class", "mm2gov.flow.id", "mm2gov.flow.offset-syncs.topic", "mm2gov.flow.checkpoints.topic",
	"mm2gov.flow.heartbeats.topic", "heartbeats.topic.replication.factor", "sync.topic.configs.interval.seconds",
	"refresh.topics.enabled", "refresh.groups.enabled", "refresh.groups.interval.seconds", "offset.lag.max",
	"emit.checkpoints.interval.seconds", "sync.group.offsets.interval.seconds", "emit.heartbeats.enabled",
	"emit.heartbeats.interval.seconds", "consumer.poll.timeout.ms", "admin.timeout.ms", "tasks.max",
	"add.source.alias.to.metrics", "use.incremental.alter.configs",
}

# The keys the settings table (mirrormaker_settings.rego) writes into, or holds,
# a config map of each role: every connector's, or the worker's. One pass over
# the table (each review computes it again: the table is data).
table_keys[config_role[name]] contains entry.key if {
	some entry in settings
	some name in entry.written
}

table_keys[config_role[name]] contains entry.key if {
	some entry in settings
	some name, _ in entry.held
}

config_role := {"sourceConnector": "connector", "checkpointConnector": "connector", "heartbeatConnector": "connector", "worker": "worker"}

isolation_key := "source.consumer.isolation.level"

# Reported by admission_mm2_filter_override instead.
reported_elsewhere(key, "connector") if controlled_key(key)

violations contains lib.violation("admission_mm2_config_key", "high", msg, path) if {
	checked
	some [config, segments, role] in config_maps
	some key, _ in config
	not key in allowed_keys[role]
	not reported_elsewhere(key, role)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s, which mm2gov does not allow in a %s config: keys outside its allow-list can change where or as whom MirrorMaker 2 connects (bootstrap.servers, security.*, sasl.*, ssl.*, client overrides, config providers, classes); remove it (the spec's clusters, authentication and tls set those)",
		[lib.subject, lib.pointer(segments), key, role],
	)
}

# Allowed keys take plain values: no config provider reference (which reads a
# file, an environment variable or a Secret at run time), no nested value, and
# no client override other than "None".
violations contains lib.violation("admission_mm2_config_value", "high", msg, path) if {
	checked
	some [config, segments, role] in config_maps
	some key, value in config
	key in allowed_keys[role]
	problem := value_problem(key, value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf("%s: %s key %s %s", [lib.subject, lib.pointer(segments), key, problem])
}

value_problem(key, value) := "has a list or object value; give it a plain string, number or boolean" if {
	not is_string(value)
	not is_number(value)
	not is_boolean(value)
} else := "is a config provider reference (${...}), which reads files, environment or Secrets at run time; give the value itself" if {
	contains(sprintf("%v", [value]), "${")
} else := "is not a boolean; set it to true or false" if {
	endswith(key, ".enabled")
	not lower(trim_space(sprintf("%v", [value]))) in {"true", "false"}
} else := "is neither read_committed nor read_uncommitted" if {
	key == isolation_key
	not lower(trim_space(sprintf("%v", [value]))) in {"read_committed", "read_uncommitted"}
} else := "is not None: with another policy, connectors may override their clients' connection settings; set it to None or remove it" if {
	key == "connector.client.config.override.policy"
	not value in override_none
}

override_none := {"None", "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy"}

# Config keys that carry credentials. config.providers.* only names providers.
sensitive_key(key) if {
	is_string(key)
	lowered := lower(key)
	regex.match(`password|secret|sasl\.jaas\.config|keystore\.key|ssl\.key(\.|$)`, lowered)
	not startswith(lowered, "config.providers")
}

# A config provider reference: ${provider:[path:]key}.
reference(value) if {
	is_string(value)
	regex.match(`^\s*\$\{[^}]+\}\s*$`, value)
}

# A credential value that holds no secret material: a reference, nothing, or a
# JAAS line whose secret options are all references. (The key is refused by
# admission_mm2_config_key anyway; a literal is reported as critical.)
credential_ok(_, value) if value == null

credential_ok(_, "")

credential_ok(_, value) if reference(value)

credential_ok(key, value) if {
	contains(lower(key), "sasl.jaas.config")
	is_string(value)
	options := regex.find_all_string_submatch_n(
		`(?i)[a-z0-9_.]*(?:password|secret|token)[a-z0-9_.]*\s*=\s*("[^"]*"|[^\s;]+)`,
		value, -1,
	)
	every option in options {
		reference(trim(option[1], `"`))
	}
}

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [config, segments, _] in config_maps
	some key, value in config
	sensitive_key(key)
	not credential_ok(key, value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s to a literal value (not shown); credentials never belong in config: use the authentication's passwordSecret",
		[lib.subject, lib.pointer(segments), key],
	)
}
