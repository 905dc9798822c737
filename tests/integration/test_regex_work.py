"""The regex grammar's work cap, measured by Java's own engine (issue 8's isolation promise under attack).

A tenant controls its topics regexes and, inside its prefixes, its topic names. Java's backtracking
`Pattern` (MM2's filters) can take exponential or high-polynomial time on a crafted name; the grammar
(governance/config/regex.py) refuses repeated ambiguous groups and caps `work`, the ways a name can be
split across a pattern. The oracle counts how often Java's matcher reads a character of the name, so
these tests check the cap against the engine itself, on the grammar's patterns and crafted names.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.config.regex import MAX_NAME, MAX_WORK, RegexProblem, analyse, parse, work
from tests.unit.test_regex import patterns

pytestmark = pytest.mark.integration

# The costliest shapes the cap still allows, written by hand: hypothesis rarely reaches them.
WORST_ALLOWED = [r"payments\..*.*x", r"payments\.[a-z]*[a-z]*[a-z]*", "payments\\." + "a?" * 17 + "x",
                 r"payments\.(ab)*(ab)*x", r"payments\..*\..*\.v[0-9]+", r"payments\.(.*x|.*y)"]
REFUSED = [r"payments\..*.*.*x", "payments\\." + "a?" * 24 + "x", r"payments\..*.*.*.*x"]


def crafted_names(pattern: str) -> list[str]:
    """Names of Kafka's longest length a tenant could create to make the matcher work hard: its prefix, then
    long runs of one character the pattern uses, ending with nothing, a stray character or a near-miss."""
    prefix = analyse(pattern).alternatives[0].literal_prefix[:MAX_NAME]
    chars = sorted({c for c in pattern if c.isalnum() or c in "._-$(*"} | set("a0._-"))
    room = MAX_NAME - len(prefix)
    names = [prefix + c * (room - len(end)) + end for c in chars for end in ("", "!", "x")]
    rng = random.Random(pattern)
    names += [prefix + "".join(rng.choice(chars) for _ in range(room)) for _ in range(4)]
    return names


def bound(pattern: str) -> int:
    """Each way to split a name reads it at most once."""
    return (work(parse(pattern)) + 1) * (MAX_NAME + 1)


def check(java_oracle, allowed: list[str]) -> int:
    queries = [(pattern, crafted_names(pattern)) for pattern in allowed]
    most = 0
    for (pattern, names), answers in zip(queries, java_oracle.regex_work(queries), strict=True):
        for name, (matched, reads) in zip(names, answers, strict=True):
            assert reads <= bound(pattern), (pattern, name, reads, bound(pattern))
            assert matched == (re.fullmatch(pattern, name) is not None), (pattern, name)
            most = max(most, reads)
    return most


def test_the_costliest_allowed_shapes_stay_within_the_cap(java_oracle):
    most = check(java_oracle, WORST_ALLOWED)
    assert most <= (MAX_WORK + 1) * (MAX_NAME + 1)
    print(f"most reads of one crafted {MAX_NAME}-character name by an allowed pattern: {most:,}")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(allowed=st.lists(patterns(), min_size=20, max_size=20))
def test_every_allowed_pattern_works_within_its_bound_in_javas_engine(java_oracle, allowed):
    check(java_oracle, allowed)


def test_refused_shapes_cost_java_more_than_the_worst_allowed_one(java_oracle):
    """What the cap keeps out, measured: three or four free repetitions, or 24 `?` in a row."""
    worst_allowed = check(java_oracle, WORST_ALLOWED)
    for pattern in REFUSED:
        with pytest.raises(RegexProblem, match="free repetitions"):
            parse(pattern)
    names = ["payments." + "a" * run + end for run in (24, MAX_NAME - len("payments.") - 1) for end in ("", "!")]
    costs = [max(reads for _, reads in answers)
             for answers in java_oracle.regex_work([(pattern, names) for pattern in REFUSED])]
    print("reads of one crafted name: " + ", ".join(f"{p}: {c:,}" for p, c in zip(REFUSED, costs, strict=True))
          + f"; worst allowed: {worst_allowed:,}")
    assert min(costs) > worst_allowed
