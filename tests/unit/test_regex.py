"""Java regexes as MM2 reads them: an allow-list grammar, literal prefixes, Kafka's LIST splitting.

Java itself is asked in tests/integration/test_regex_oracle.py; here the grammar is
checked against Python's `re` (the analysis must be sound for every allowed pattern).
"""

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from governance.config.regex import MAX_WORK, RegexProblem, analyse, parse, split_list, work


@pytest.mark.parametrize(("regex", "alternatives"), [
    (r"payments\.orders.*", [("payments.orders", False)]),
    (r"payments\.refunds", [("payments.refunds", True)]),
    (r"^payments[.]refunds$", [("payments.refunds", True)]),
    (r"payments\.x|marketing\..*", [("payments.x", True), ("marketing.", False)]),
    (r"(payments\.a|payments\.b)", [("payments.a", True), ("payments.b", True)]),
    (r"(?:payments\.a|(risk\..*))", [("payments.a", True), ("risk.", False)]),
    (r"(payments|marketing)\..*", [("", False)]),
    (r"(payments\.)(orders|refunds)", [("payments.", False)]),
    (r"payments\.orders?", [("payments.order", False)]),
    (r"payments\.o{2}", [("payments.", False)]),
    (r"pay.*", [("pay", False)]),
    (r".*", [("", False)]),
    (r"payments\.[a-z]+", [("payments.", False)]),
    (r"payments\.[^x]", [("payments.", False)]),
    (r"payments\.a^b", [("payments.a", False)]),
    (r"payments-\$x", [("payments-$x", True)]),
])
def test_alternatives_and_literal_prefixes(regex, alternatives):
    facts = analyse(regex)
    assert [(a.literal_prefix, a.exact) for a in facts.alternatives] == alternatives
    assert facts.case_insensitive is False


@pytest.mark.parametrize(("regex", "why"), [
    (r"\p{L}+", r"'\p' is not allowed"),
    (r"a\Qb.c\E", r"'\Q' is not allowed"),
    (r"orders\Z", r"'\Z' is not allowed"),
    (r"[a-z&&[^x]]", "inside [...] must be escaped"),
    (r"[a[b]]", "inside [...] must be escaped"),
    (r"(?i)payments\..*", "only plain (...) and non-capturing"),
    (r"(?x)payments\.#x", "only plain (...) and non-capturing"),
    (r"payments\.(?i:orders)", "only plain (...) and non-capturing"),
    (r"(?<n>x)", "only plain (...) and non-capturing"),
    (r"(?=payments).*", "only plain (...) and non-capturing"),
    (r"(a)\1", r"'\1' is not allowed"),
    (r"payments\.\101", r"'\1' is not allowed"),
    (r"payments\.\0", r"'\0' is not allowed"),
    (r"a\vb", r"'\v' is not allowed"),
    (r"payments\d", r"'\d' is not allowed"),
    (r"payments\.(", "missing ')'"),
    (r"payments\.)", "unbalanced ')'"),
    (r"*payments", "'*' must be escaped"),
    (r"payments\.x,.*", "a comma"),
    (r"(payments\.x,.*)", "a comma"),
    (r"payments\.a{1,3}", "only {n} repetition"),
    (r"payments\.a*+", "possessive or stacked"),
    (r"payments\. x", "a space"),
    ("payments\\.x\n.*", "U+000A"),
    ("payments\\.é", "U+00E9"),
    (r"payments\.[]x]", "empty character class"),
    (r"payments\.[x", "missing ']'"),
    ("payments\\", "cannot end with"),
    ("^*", "quantifier on an anchor"),
    ("(" * 30 + "a" + ")" * 30, "nested more than"),
    ("a" * 1001, "longer than"),
])
def test_outside_the_grammar_is_refused(regex, why):
    with pytest.raises(RegexProblem) as refused:
        analyse(regex)
    assert why in str(refused.value)


def test_400_nested_groups_are_refused_without_recursion_error():
    with pytest.raises(RegexProblem, match="nested more than"):
        analyse("(" * 400 + "a" + ")" * 400)


@pytest.mark.parametrize(("value", "items"), [
    ("a,b", ["a", "b"]),
    ("  a , b\t,c  ", ["a", "b", "c"]),
    ("a,,b", ["a", "", "b"]),
    ("", []),
    ("   ", []),
    ("(payments\\.x,.*)", ["(payments\\.x", ".*)"]),
])
def test_split_list_as_kafka(value, items):
    assert split_list(value) == items


# ---- property: the analysis is sound for every pattern of the grammar ------------------------

LITERALS = st.sampled_from([*list("abcxyz019_-"), r"\.", r"\-", r"\$", r"\(", r"\*"])
CLASSES = st.sampled_from(["[a-z]", "[0-9_.]", "[^.]", "[.]", r"[\-x]", "[abc]"])


@st.composite
def patterns(draw, depth=0):
    def piece():
        kind = draw(st.sampled_from(["lit", "lit", "lit", "dot", "class"] + (["group"] if depth < 3 else [])))
        if kind == "lit":
            atom = draw(LITERALS)
        elif kind == "dot":
            atom = "."
        elif kind == "class":
            atom = draw(CLASSES)
        else:
            atom = "(" + draw(st.sampled_from(["", "?:"])) + draw(patterns(depth + 1)) + ")"
            inner = atom[1:-1].removeprefix("?:")
            if any(c in inner for c in "*+?{|"):  # only `?` repeats nothing (regex.py: no ambiguous repeats)
                return atom + draw(st.sampled_from(["", "", "?"]))
        return atom + draw(st.sampled_from(["", "", "", "*", "+", "?", "{2}", "*?"]))

    alternatives = [
        (draw(st.sampled_from(["", "^"])) + "".join(piece() for _ in range(draw(st.integers(0, 5))))
         + draw(st.sampled_from(["", "$"])))
        for _ in range(draw(st.integers(1, 3)))
    ]
    pattern = "|".join(alternatives)
    assume(depth > 0 or _within_work(pattern))  # too many free repetitions: refused, tested below
    return pattern


def _within_work(pattern: str) -> bool:
    try:
        analyse(pattern)
    except RegexProblem as problem:
        assert "free repetitions" in str(problem), (pattern, problem)
        return False
    return True


NAMES = st.text(alphabet=st.sampled_from(list("abcxyz019_-.$(*")), max_size=12)


@settings(max_examples=400, deadline=None)
@given(pattern=patterns(), names=st.lists(NAMES, min_size=1, max_size=30))
def test_every_match_starts_with_a_literal_prefix(pattern, names):
    facts = analyse(pattern)
    compiled = re.compile(pattern)
    for name in names:
        if compiled.fullmatch(name):
            assert any(name.startswith(a.literal_prefix) and (not a.exact or name == a.literal_prefix)
                       for a in facts.alternatives), (pattern, name, facts)


@settings(max_examples=200, deadline=None)
@given(pattern=patterns(), mutation=st.sampled_from(["(?i)", "(?x)", "\\1", "\\Q", ",", " ", "\\p{L}", "{1,2}",
                                                     "(?=a)", "[a&&b]", "\\0", "\n", "\u2028"]),
       at=st.integers(0, 50))
def test_hostile_mutations_of_allowed_patterns_are_refused(pattern, mutation, at):
    at = min(at, len(pattern))
    if (len(pattern[:at]) - len(pattern[:at].rstrip("\\"))) % 2:  # never split an escape
        at += 1
    mutated = pattern[:at] + mutation + pattern[at:]
    with pytest.raises(RegexProblem):
        analyse(mutated)


@pytest.mark.parametrize("regex", [r"payments\.(a*)*", r"payments\.(a|aa)+", r"payments\.((x)+){3}",
                                   r"payments\.(?:x+)*", r"payments\.(a?)*b", r"payments\.((a|b)c)*?"])
def test_a_repeated_ambiguous_group_is_refused(regex):
    """`(a*)*` and kin take exponential time in Java's and Python's matchers on one crafted name."""
    with pytest.raises(RegexProblem, match="repeated group"):
        analyse(regex)


@pytest.mark.parametrize("regex", [r"payments\.(ab)*", r"payments\.(a*)?", r"payments\.(orders|refunds)?",
                                   r"payments\.(v[0-9])+x", r"payments\.(?:[a-z]_){2}.*"])
def test_a_repeated_plain_group_and_an_optional_one_are_allowed(regex):
    assert analyse(regex).alternatives



@pytest.mark.parametrize("regex", [r"payments\..*.*.*x", r"payments\.a*a*a*a", r"payments\.(ab)*(ab)*(ab)*",
                                   "payments\\." + "a?" * 20 + "x", r"payments\.(.*x|.*y).*.*z",
                                   r"payments\.[a-z]*[a-z]*[a-z]*[a-z]*"])
def test_too_many_free_repetitions_are_refused(regex):
    """Polynomial backtracking: `.*.*.*x` makes Java read a 249-character name ~7 million times."""
    with pytest.raises(RegexProblem, match="free repetitions"):
        analyse(regex)


@pytest.mark.parametrize("regex", [r"payments\..*", r"payments\..*-v[0-9]+\..*", r"payments\..*.*x",
                                   r"payments\.[a-z]+\.[a-z]+\.[a-z]+\.[a-z0-9_]+", r"payments\.[^.]*\..*",
                                   r"payments\.(orders|refunds)\..*|payments-.*|payments_.*x?"])
def test_repetitions_that_settle_or_stay_few_are_allowed(regex):
    """A run that ends at a character it cannot match, or at the name's end, multiplies nothing."""
    assert work(parse(regex)) <= MAX_WORK


@settings(max_examples=300, deadline=None)
@given(pattern=patterns())
def test_work_is_what_the_parser_enforces(pattern):
    assert work(parse(pattern)) <= MAX_WORK
