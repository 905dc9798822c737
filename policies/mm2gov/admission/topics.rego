# A KafkaTopic names a topic of its tenant: under its topic prefixes, or under
# the remote-topic (or MirrorMaker 2 internal) prefixes of its flows into the
# KafkaTopic's cluster. Another tenant's name would hand it that topic.
package mm2gov.admission.rules.topics

import data.mm2gov.admission.lib

checked if {
	lib.kind == "KafkaTopic"
	lib.content_checked
	lib.tenant
}

# The topic: spec.topicName, else the object's name (Strimzi's rule).
topic := [name, "spec/topicName"] if {
	name := lib.spec.topicName
	is_string(name)
	name != ""
} else := [lib.name, "metadata/name"]

# The cluster: the alias whose Strimzi cluster the strimzi.io/cluster label
# names in this namespace (clusters.yaml's strimzi section), else the alias of
# that name. Without one, any of the tenant's flows may have brought the topic.
cluster := lib.object_cluster

into_cluster(flow) if flow.target == cluster

into_cluster(_) if cluster == ""

allowed := {p | some p in lib.tenant.topic_prefixes} | {p |
	some flow in lib.flows
	into_cluster(flow)
	some p in array.concat(lib.remote_prefixes(flow), [lib.internal_prefix(flow)])
}

violations contains lib.violation("admission_topic_outside_scope", "high", msg, path) if {
	checked
	[name, path] := topic
	not lib.inside(name, allowed)
	msg := sprintf(
		"%s: topic '%s' is outside tenant %s's topic names%s (%s); name it under one of those prefixes, e.g. '%s<name>'",
		[lib.subject, name, lib.tenant_name, cluster_text, lib.text_list(allowed), lib.tenant.topic_prefixes[0]],
	)
}

cluster_text := sprintf(" on cluster %s", [cluster]) if {
	cluster != ""
} else := ""
