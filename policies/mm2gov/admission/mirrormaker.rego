# A KafkaMirrorMaker2 may only mirror its tenant's names, between clusters of
# clusters.yaml, along a flow the tenant declares, with the MM2 settings that
# keep tenants apart (docs/policies.md, "Admission rules"), whoever wrote it.
#
# Two shapes are read: Strimzi's kafka.strimzi.io/v1 (spec.target.alias,
# spec.mirrors[].source.alias) and the older v1beta2 one (spec.connectCluster,
# spec.clusters[].alias, spec.mirrors[].sourceCluster/targetCluster).
#
# Everything that decides where and as whom MirrorMaker 2 connects is held to
# the flow: bootstrap servers are the declared clusters' own, authentication is
# the flow's MM2 user with its own Secrets, every Secret the spec references
# (authentication, trusted certificates, pod volumes, env, external
# configuration) is the flow's or a cluster CA's, config maps take only
# allow-listed keys, and pod overrides that redirect names or the JVM are refused.
#
# One package over several files, one concern each: this one reads the object's
# parts every rule reads (mirrors, their ends and declared flows, the Connect
# spec, connections, config maps) and checks its shape, clusters and flows;
# mirrormaker_patterns.rego what it mirrors, mirrormaker_settings.rego its
# connector settings and delivery, mirrormaker_connections.rego where it
# connects, mirrormaker_credentials.rego as whom, mirrormaker_configs.rego its
# config maps, mirrormaker_pod.rego its pod overrides. A rule or function that
# another file reads is defined here: the webhook uploads the modules to OPA one at a
# time, in path order, and a module that names a rule or function of its
# package not uploaded yet does not compile (tests/unit/test_builtin_upload.py).
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

checked if {
	lib.kind == "KafkaMirrorMaker2"
	lib.content_checked
	lib.tenant
}

legacy if "connectCluster" in object.keys(lib.spec)

legacy if "clusters" in object.keys(lib.spec)

# [index, mirror] of every mirror that is an object (admission_object_malformed
# reports the others).
mirrors := [[i, mirror] |
	is_array(lib.spec.mirrors)
	some i, mirror in lib.spec.mirrors
	is_object(mirror)
]

# Per-mirror facts that several rules read are computed once per review into
# objects keyed by the mirror's index, which rules look up; paths stay
# segments until a violation needs them as a pointer.

# ends[i] = [source alias, its path segments, target alias, its path segments].
ends := {i: mirror_ends(i, mirror) | some [i, mirror] in mirrors}

mirror_ends(i, mirror) := [source, ["spec", "mirrors", i, "sourceCluster"], target, target_path] if {
	legacy
	source := lib.as_string(object.get(mirror, "sourceCluster", ""))
	[target, target_path] := legacy_target(i, mirror)
} else := [
	lib.as_string(object.get(mirror, ["source", "alias"], "")),
	["spec", "mirrors", i, "source", "alias"],
	v1_target,
	["spec", "target", "alias"],
]

legacy_target(i, mirror) := [lib.as_string(mirror.targetCluster), ["spec", "mirrors", i, "targetCluster"]] if {
	"targetCluster" in object.keys(mirror)
} else := [connect_cluster, ["spec", "connectCluster"]]

connect_cluster := lib.as_string(object.get(lib.spec, "connectCluster", ""))

v1_target := lib.as_string(object.get(lib.spec, ["target", "alias"], ""))

# [alias, path segments, role] of every cluster alias the object names.
alias_refs contains [v1_target, ["spec", "target", "alias"], "target"] if not legacy

alias_refs contains [connect_cluster, ["spec", "connectCluster"], "Connect (target)"] if legacy

alias_refs contains [source, path, "source"] if {
	some [source, path, _, _] in ends
}

alias_refs contains [target, path, "target"] if {
	some [_, _, target, path] in ends
}

alias_refs contains [alias, ["spec", "clusters", k, "alias"], "cluster"] if {
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	alias := lib.as_string(object.get(cluster, "alias", ""))
}

# declared[i] = the tenant's flows from mirror i's source to its target.
declared := {i: flows |
	some i, [source, _, target, _] in ends
	flows := [flow | some flow in lib.flows; flow.source == source; flow.target == target]
}

# Every flow some mirror declares: the flows this MirrorMaker 2 may act for.
declared_flows := {flow | some flows in declared; some flow in flows}

# ---- the object's parts ------------------------------------------------------

# [the Connect cluster's spec, its path]: spec.target, or in v1beta2 the
# spec.clusters entry of connectCluster.
connect_spec := [target, ["spec", "target"]] if {
	not legacy
	target := object.get(lib.spec, "target", {})
	is_object(target)
} else := legacy_connect[0] if {
	legacy
	count(legacy_connect) > 0
} else := [{}, ["spec", "target"]]

legacy_connect := [[cluster, ["spec", "clusters", k]] |
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	cluster.alias == connect_cluster
]

# [connection, its path segments, cluster alias, the flows it may serve] of
# every Kafka connection the spec describes, in either shape: the v1 target
# (every declared flow), each v1 mirror's source (that mirror's flows), each
# v1beta2 cluster (the declared flows with that alias as an end).
connections contains [target, ["spec", "target"], v1_target, declared_flows] if {
	target := lib.spec.target
	is_object(target)
}

connections contains [source, ["spec", "mirrors", i, "source"], alias, {flow | some flow in declared[i]}] if {
	some [i, mirror] in mirrors
	source := mirror.source
	is_object(source)
	alias := lib.as_string(object.get(source, "alias", ""))
}

connections contains [cluster, ["spec", "clusters", k], alias, flows] if {
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	alias := lib.as_string(object.get(cluster, "alias", ""))
	flows := {flow | some flow in declared_flows; alias in {flow.source, flow.target}}
}

# [config map, its path segments, role] of every `config` Strimzi hands to Kafka
# clients, the Connect worker or a connector. Listed, not found by walk():
# walking the whole spec on every review cost most of the decision's time.
config_maps contains [config, ["spec", "target", "config"], "worker"] if {
	config := lib.spec.target.config
	is_object(config)
}

config_maps contains [config, ["spec", "mirrors", i, "source", "config"], "client"] if {
	some i, mirror in lib.spec.mirrors
	config := mirror.source.config
	is_object(config)
}

config_maps contains [config, ["spec", "mirrors", i, part, "config"], "connector"] if {
	some i, mirror in lib.spec.mirrors
	some part in ["sourceConnector", "checkpointConnector", "heartbeatConnector"]
	config := mirror[part].config
	is_object(config)
}

config_maps contains [config, ["spec", "clusters", i, "config"], "worker"] if {
	some i, cluster in lib.spec.clusters
	config := cluster.config
	is_object(config)
}

# ---- the settings table ------------------------------------------------------

# MirrorMaker 2's settings, declared once in mm2gov (governance/model/mm2_settings.py)
# and pushed with the repo as data.mm2gov_repo.mm2_settings, each entry
# {key, value, why, rule, exactly_once, exact, off, written, held}: `written`
# the configs mm2gov writes it into, `held` how admission holds a config to it
# ({required, unless_false} per config name). No value of it is restated here.
# A missing or malformed table is no table: every KafkaMirrorMaker2 is refused
# (admission_mm2_settings_missing, mirrormaker_settings.rego), never checked
# against nothing. Read by mirrormaker_settings.rego and the allow-lists of
# mirrormaker_configs.rego.
settings := table if {
	table := data.mm2gov_repo.mm2_settings
	is_array(table)
	count(table) > 0
	every entry in table {
		well_formed(entry)
	}
} else := []

# The config maps an entry may name: a mirror's connectors, and the Connect
# worker's (spec.target.config; v1beta2: the connectCluster's spec.clusters entry).
config_names := {"sourceConnector", "checkpointConnector", "heartbeatConnector", "worker"}

well_formed(entry) if {
	is_string(entry.key)
	is_string(entry.why)
	is_string(entry.rule)
	is_boolean(entry.exactly_once)
	is_boolean(entry.exact)
	plain_value(entry.value)
	optional_string(entry.off)
	is_array(entry.written)
	every name in entry.written {
		name in config_names
	}
	is_object(entry.held)
	every name, held in entry.held {
		name in config_names
		is_boolean(held.required)
		optional_string(held.unless_false)
	}
	reported(entry)
}

plain_value(value) if is_string(value)

plain_value(value) if is_number(value)

optional_string(value) if is_string(value)

optional_string(null)

# An entry admission holds names the rule that reports a breach.
reported(entry) if count(entry.held) == 0

reported(entry) if entry.rule != ""

# ---- helpers -----------------------------------------------------------------

# Connector settings that decide what is mirrored, or from and to where, on
# their own: a `topics`/`groups` list or a custom filter class would bypass
# topicsPattern/groupsPattern, and cluster aliases or connections set here
# would bypass spec's clusters. mm2gov controls these through spec only.
controlled_key(key) if key in {"topics", "groups", "topic.filter.class", "group.filter.class"}

controlled_key(key) if startswith(key, "source.cluster.")

controlled_key(key) if startswith(key, "target.cluster.")

shown_value(value) := sprintf("'%v'", [value]) if value != null

shown_value(null) := "unset"

# A field of what should be an object; null when it is not one or lacks it.
field_of(value, key) := value[key] if is_object(value)

else := null

# ---- shape -------------------------------------------------------------------

# The API server has checked the CRD schema before the webhook runs, so these
# only fire on objects no Strimzi CRD admits; rules skip what they cannot read.
violations contains lib.violation("admission_object_malformed", "high", msg, "spec") if {
	checked
	not is_object(object.get(lib.obj, "spec", null))
	msg := sprintf("%s has no spec object; give it the KafkaMirrorMaker2 spec", [lib.subject])
}

# Strimzi's served CRD may keep both shapes' fields; the rules read one shape (`legacy` picks the v1beta2
# one whenever it is present). An object carrying fields of both would be judged by one set while Strimzi
# may act on the other (join another flow's Connect group through spec.target.groupId beside a
# spec.connectCluster): an ambiguous shape is refused, naming the fields of each.
v1_shape_fields contains "spec.target" if "target" in object.keys(lib.spec)

v1_shape_fields contains sprintf("spec.mirrors[%d].source", [i]) if {
	some [i, mirror] in mirrors
	"source" in object.keys(mirror)
}

v1beta2_shape_fields contains sprintf("spec.%s", [key]) if {
	some key in ["connectCluster", "clusters"]
	key in object.keys(lib.spec)
}

v1beta2_shape_fields contains sprintf("spec.mirrors[%d].%s", [i, key]) if {
	some [i, mirror] in mirrors
	some key in ["sourceCluster", "targetCluster"]
	key in object.keys(mirror)
}

violations contains lib.violation("admission_mm2_ambiguous_shape", "high", msg, "spec") if {
	checked
	count(v1_shape_fields) > 0
	count(v1beta2_shape_fields) > 0
	msg := sprintf(
		"%s: the spec mixes Strimzi's v1 fields (%s) with v1beta2 fields (%s), which name the clusters and the Connect cluster twice; write one shape only",
		[lib.subject, concat(", ", sort(v1_shape_fields)), concat(", ", sort(v1beta2_shape_fields))],
	)
}

# A MirrorMaker 2 older than the per-flow policy needs (input.mm2_version_ok, governance/kafka/version.py
# MIN_MM2_VERSION) ignores the methods that name each flow's own offset-syncs, checkpoints and heartbeats
# topics, and shares Kafka's per-alias ones between every flow of two clusters.
violations contains lib.violation("admission_mm2_version", "high", msg, "spec/version") if {
	checked
	input.mm2_version_ok == false
	msg := sprintf(
		"%s: spec.version %v is not a Kafka release at or after %s, whose MirrorMaker 2 keeps each flow to its own internal topics through mm2gov's replication policy; set spec.version to the release mm2gov generates, or leave it unset",
		[lib.subject, lib.spec.version, input.mm2_min_version],
	)
}

# An MM2 without mirrors is an empty Connect cluster in the tenant's name: refuse it.
violations contains lib.violation("admission_object_malformed", "high", msg, "spec/mirrors") if {
	checked
	is_object(object.get(lib.obj, "spec", null))
	mirrors_value := object.get(lib.spec, "mirrors", [])
	is_array(mirrors_value)
	count(mirrors_value) == 0
	msg := sprintf("%s: spec.mirrors is missing or empty; declare the tenant's flow as one mirror", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, "spec/mirrors") if {
	checked
	mirrors_field := lib.spec.mirrors
	not is_array(mirrors_field)
	msg := sprintf("%s: spec.mirrors is not a list; write it as a list of mirrors", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, path) if {
	checked
	some i, mirror in lib.spec.mirrors
	not is_object(mirror)
	path := lib.pointer(["spec", "mirrors", i])
	msg := sprintf("%s: mirror %v is not an object; write each mirror as {source, sourceConnector, topicsPattern, ...}", [lib.subject, i])
}

# ---- clusters and flows ------------------------------------------------------

violations contains lib.violation("admission_mm2_cluster_unknown", "high", msg, path) if {
	checked
	some [alias, segments, role] in alias_refs
	not lib.repo_clusters[alias]
	path := lib.pointer(segments)
	msg := sprintf(
		"%s: %s cluster alias '%s' is not a cluster of clusters.yaml (%s); use one of those aliases, or add the cluster to clusters.yaml first",
		[lib.subject, role, alias, lib.text_list(object.keys(lib.repo_clusters))],
	)
}

violations contains lib.violation("admission_mm2_flow_undeclared", "high", msg, path) if {
	checked
	some i, [source, _, target, _] in ends
	lib.repo_clusters[source]
	lib.repo_clusters[target]
	count(declared[i]) == 0
	path := lib.pointer(["spec", "mirrors", i])
	msg := sprintf(
		"%s: mirror %d replicates %s -> %s, which is not a flow of tenant %s (its flows: %s); declare the flow in tenants/%s.yaml first, or mirror one of its flows",
		[lib.subject, i, source, target, lib.tenant_name, flow_pairs, lib.tenant_name],
	)
}

flow_pairs := "none" if {
	count(lib.flows) == 0
} else := lib.text_list({sprintf("%s -> %s", [flow.source, flow.target]) | some flow in lib.flows})
