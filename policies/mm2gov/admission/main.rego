# The one decision `mm2gov admission serve` asks for (docs/policies.md,
# "Admission rules"): every violation of every package
# mm2gov.admission.rules.<name>. Defined for any input, garbage included: the
# webhook allows a request only when this says so (fail closed).
#
# The rules live under mm2gov.admission.rules, not mm2gov.rules, so the repo
# decision (data.mm2gov.decision) never collects them.
package mm2gov.admission

violations contains v if {
	some v in data.mm2gov.admission.rules[_].violations
}

decision := {"allowed": count(sorted) == 0, "violations": sorted} if {
	sorted := sort(violations)
}
