"""Java regexes as MirrorMaker 2 reads them: refuse what Python and Java read differently,
and extract the facts Rego needs (alternatives and their literal prefixes).

MM2 matches a topic or group name against the whole pattern (`Matcher.matches()`),
so the fixed text at the start of an alternative is a prefix of every name it
can match. Python's `re` parser gives us that structure once the constructs
whose meaning differs between the two engines are ruled out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as C
from re import _parser as sre_parser

# Constructs one engine lacks or both read differently: (pattern over the regex source, why).
DIVERGENT_ESCAPES = {
    "p": r"\p{...} Unicode classes are Java-only",
    "P": r"\P{...} Unicode classes are Java-only",
    "Q": r"\Q...\E quoting is Java-only",
    "E": r"\Q...\E quoting is Java-only",
    "z": r"\z is Java-only (Python spells end of input \Z)",
    "Z": r"\Z means end of input in Python but 'before a final line terminator' in Java",
    "h": r"\h (horizontal whitespace) is Java-only",
    "H": r"\H is Java-only",
    "R": r"\R (line break) is Java-only",
    "X": r"\X (grapheme cluster) is Java-only",
    "v": r"\v is a vertical-whitespace class in Java but a single character in Python",
    "V": r"\V is Java-only",
    "G": r"\G is Java-only",
    "k": r"\k<name> back-references are Java-only",
}
INLINE_FLAGS_SAME = set("imsx")
INLINE_FLAGS_WHY = {
    "u": "(?u) means Unicode case folding in Java but Unicode matching in Python",
    "U": "(?U) is Java-only (Unicode character classes)",
    "d": "(?d) is Java-only (Unix lines)",
    "a": "(?a) is Python-only (ASCII matching)",
    "L": "(?L) is Python-only (locale matching)",
}


class RegexProblem(ValueError):
    """The regex is invalid, or means something else to Java than to Python."""


@dataclass(frozen=True)
class Alternative:
    literal_prefix: str
    exact: bool  # the alternative matches only `literal_prefix` itself

    def to_input(self) -> dict[str, object]:
        return {"literal_prefix": self.literal_prefix, "exact": self.exact}


@dataclass(frozen=True)
class PatternFacts:
    regex: str
    alternatives: tuple[Alternative, ...]
    case_insensitive: bool

    def to_input(self) -> dict[str, object]:
        return {"regex": self.regex, "case_insensitive": self.case_insensitive,
                "alternatives": [a.to_input() for a in self.alternatives]}


def check_java_compatible(regex: str) -> None:
    """Raise RegexProblem for constructs Java and Python read differently, or Python cannot parse."""
    i = 0
    in_class = False
    while i < len(regex):
        char = regex[i]
        if char == "\\" and i + 1 < len(regex):
            escaped = regex[i + 1]
            if escaped in DIVERGENT_ESCAPES:
                raise RegexProblem(DIVERGENT_ESCAPES[escaped])
            i += 2
            continue
        if in_class:
            if char == "[":
                raise RegexProblem("nested character classes [a[b]] are Java-only (Python reads '[' literally)")
            if regex.startswith("&&", i):
                raise RegexProblem("character class intersection [a&&b] is Java-only")
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if regex.startswith("[^]", i) or regex.startswith("[]", i):
                raise RegexProblem("a ']' first in a character class is literal in Python but closes it in Java")
        elif regex.startswith("(?P", i):
            raise RegexProblem("(?P...) named groups are Python-only; Java writes (?<name>...)")
        elif regex.startswith("(?<", i) and i + 3 < len(regex) and regex[i + 3] not in "=!":
            raise RegexProblem("(?<name>...) named groups are not supported; use a plain group")
        elif regex.startswith("(?", i):
            match = re.match(r"\(\?([A-Za-z-]+)[:)]", regex[i:])
            if match:
                for flag in match.group(1).replace("-", ""):
                    if flag not in INLINE_FLAGS_SAME:
                        raise RegexProblem(INLINE_FLAGS_WHY.get(flag, f"unknown inline flag (?{flag})"))
        i += 1
    try:
        re.compile(regex)
    except re.error as exc:
        raise RegexProblem(f"invalid regex: {exc.msg} at position {exc.pos}") from None


def analyse(regex: str) -> PatternFacts:
    """Alternatives with their literal prefixes; raises RegexProblem like `check_java_compatible`."""
    check_java_compatible(regex)
    parsed = sre_parser.parse(regex)
    case_insensitive = bool(parsed.state.flags & C.SRE_FLAG_IGNORECASE) or _uses_scoped_ignorecase(parsed)
    return PatternFacts(regex, tuple(_literal_prefix(alt) for alt in _alternatives(parsed)), case_insensitive)


def _alternatives(sub) -> list:
    items = list(sub)
    if len(items) == 1 and items[0][0] is C.BRANCH:
        return list(items[0][1][1])
    if len(items) == 1 and items[0][0] is C.SUBPATTERN and not items[0][1][1] and not items[0][1][2]:
        return _alternatives(items[0][1][3])
    return [sub]


def _literal_prefix(sub) -> Alternative:
    text = ""
    items = list(sub)
    for index, (op, av) in enumerate(items):
        if op is C.LITERAL:
            text += chr(av)
        elif op is C.IN and len(av) == 1 and av[0][0] is C.LITERAL:  # [.] is a literal dot
            text += chr(av[0][1])
        elif op is C.AT and _is_outer_anchor(av, index, len(items)):
            continue
        elif op is C.SUBPATTERN and not av[1] and not av[2] and not _has_branch(av[3]):
            inner = _literal_prefix(av[3])
            text += inner.literal_prefix
            if not inner.exact:
                return Alternative(text, False)
        else:
            return Alternative(text, False)
    return Alternative(text, True)


def _is_outer_anchor(at: object, index: int, count: int) -> bool:
    """^ first or $ last: no effect under MM2's whole-name matching."""
    starts = at in (C.AT_BEGINNING, C.AT_BEGINNING_STRING) and index == 0
    ends = at in (C.AT_END, C.AT_END_STRING) and index == count - 1
    return starts or ends


def _has_branch(sub) -> bool:
    return any(op is C.BRANCH for op, _ in sub)


def _uses_scoped_ignorecase(sub) -> bool:
    for op, av in sub:
        if op is C.SUBPATTERN:
            if av[1] & C.SRE_FLAG_IGNORECASE or _uses_scoped_ignorecase(av[3]):
                return True
        elif op is C.BRANCH:
            if any(_uses_scoped_ignorecase(branch) for branch in av[1]):
                return True
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if _uses_scoped_ignorecase(av[2]):
                return True
        elif op in (C.ASSERT, C.ASSERT_NOT) and _uses_scoped_ignorecase(av[1]):
            return True
    return False
