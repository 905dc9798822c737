# Tests of mirrormaker_pod.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t

# ---- pod overrides -----------------------------------------------------------

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
