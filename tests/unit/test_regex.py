"""Java regexes as MM2 reads them: divergent constructs refused, literal prefixes extracted."""

import pytest

from governance.config.regex import RegexProblem, analyse


@pytest.mark.parametrize(("regex", "alternatives", "case_insensitive"), [
    (r"payments\.orders.*", [("payments.orders", False)], False),
    (r"payments\.refunds", [("payments.refunds", True)], False),
    (r"^payments[.]refunds$", [("payments.refunds", True)], False),
    (r"payments\.x|marketing\..*", [("payments.x", True), ("marketing.", False)], False),
    # Python's parser factors the common prefix out of the branches: still a sound literal prefix
    (r"(payments\.a|payments\.b)", [("payments.", False)], False),
    (r"(payments|marketing)\..*", [("", False)], False),
    (r"(payments\.)(orders|refunds)", [("payments.", False)], False),
    (r"pay.*", [("pay", False)], False),
    (r".*", [("", False)], False),
    (r"(?i)payments\..*", [("payments.", False)], True),
    (r"payments\.(?i:orders)", [("payments.", False)], True),
])
def test_alternatives_and_literal_prefixes(regex, alternatives, case_insensitive):
    facts = analyse(regex)
    assert [(a.literal_prefix, a.exact) for a in facts.alternatives] == alternatives
    assert facts.case_insensitive is case_insensitive


@pytest.mark.parametrize(("regex", "why"), [
    (r"\p{L}+", "Java-only"),
    (r"a\Qb.c\E", "Java-only"),
    (r"orders\Z", "before a final line terminator"),
    (r"orders\z", "Java-only"),
    (r"[a-z&&[^x]]", "Java-only"),
    (r"(?U)\w+", "(?U) is Java-only"),
    (r"(?u)x", "Unicode case folding in Java"),
    (r"(?a)x", "Python-only"),
    (r"(?P<name>x)", "Python-only"),
    (r"a\vb", "vertical-whitespace"),
    (r"payments\.(", "invalid regex: missing )"),
    (r"*payments", "invalid regex: nothing to repeat"),
])
def test_constructs_read_differently_or_invalid_are_refused(regex, why):
    with pytest.raises(RegexProblem, match=None) as refused:
        analyse(regex)
    assert why in str(refused.value)


def test_escaped_constructs_are_not_mistaken_for_divergent_ones():
    assert analyse(r"payments\\p").alternatives[0].literal_prefix == "payments\\p"
    assert analyse(r"payments\.\(\?P").alternatives[0].literal_prefix == "payments.(?P"
