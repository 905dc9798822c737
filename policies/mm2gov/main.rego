# The one decision mm2gov asks for (docs/policies.md): every tenant's scope and
# every violation of the built-in rules and of organisation rules, that is of
# every package mm2gov.rules.<name> with a set named `violations`.
package mm2gov

violations contains v if {
	some v in data.mm2gov.rules[_].violations
}

decision := {
	"scopes": data.mm2gov.scopes.scopes,
	"violations": sort(violations),
}
