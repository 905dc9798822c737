# Restricted data never reaches a cloud cluster (the repo rule
# restricted_to_cloud, held at admission): a restricted tenant's KafkaUser or
# KafkaTopic may not land on a cloud-zone cluster. The cluster is what the
# strimzi.io/cluster label may designate (clusters.yaml's strimzi section, or
# the alias of that name); a label that designates no cluster of clusters.yaml
# proves nothing, so it is refused too.
package mm2gov.admission.rules.placement

import data.mm2gov.admission.lib

checked if {
	lib.kind in {"KafkaUser", "KafkaTopic"}
	lib.content_checked
	lib.tenant.classification == "restricted"
}

violations contains lib.violation("admission_restricted_on_cloud", "critical", msg, "metadata/labels/strimzi.io~1cluster") if {
	checked
	some alias in lib.label_clusters
	lib.repo_clusters[alias].zone == "cloud"
	msg := sprintf(
		"%s of restricted tenant %s is labelled strimzi.io/cluster=%s, which is cluster %s in zone cloud; restricted tenants' users and topics stay off cloud clusters: label it with one of the tenant's on-premises clusters",
		[lib.subject, lib.tenant_name, lib.strimzi_label, alias],
	)
}

violations contains lib.violation("admission_restricted_on_cloud", "critical", msg, "metadata/labels/strimzi.io~1cluster") if {
	checked
	count(lib.label_clusters) == 0
	msg := sprintf(
		"%s of restricted tenant %s has strimzi.io/cluster %s, which names no cluster of clusters.yaml, so mm2gov cannot tell it stays off cloud clusters; label it with one of the tenant's on-premises clusters",
		[lib.subject, lib.tenant_name, label_text],
	)
}

label_text := sprintf("'%s'", [lib.strimzi_label]) if {
	lib.strimzi_label != ""
} else := "unset"
