"""Java regexes as MirrorMaker 2 reads them, restricted to a grammar Java and Python read
identically, and the facts Rego needs (alternatives and their literal prefixes).

A deny-list of constructs that differ between the engines is never complete
(`(?x)` comments end at different characters, `\\1nn` is a backreference to
Java and octal to Python, ...), so this module accepts an allow-list grammar
and parses it itself, without Python's `re` parser:

    regex := alt ('|' alt)*
    alt   := piece*
    piece := atom quant?            quant := ('*' | '+' | '?' | '{' digits '}') '?'?
    atom  := literal | '\\' punct | '.' | '^' | '$' | class | '(' ('?:')? regex ')'
    class := '[' '^'? (cchar ('-' cchar)?)+ ']'     cchar := [A-Za-z0-9_.] | '\\' punct

`literal` is printable ASCII other than the metacharacters, a space or a comma;
`punct` is printable ASCII other than a letter, a digit, a space or a comma. No
inline flags, comments, backreferences, octal or named escapes, quoting,
property classes, lookaround, possessive quantifiers or `{n,m}`: each either
means something else to one engine or contains a comma, which Kafka's LIST type
splits on before MM2 ever compiles the pattern (`split_list`).

MM2 matches a topic or group name against the whole pattern (`Matcher.matches()`),
so the fixed text at the start of an alternative is a prefix of every name it
can match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_LENGTH = 1000  # characters of one pattern
MAX_DEPTH = 20  # nested groups
MAX_NAME = 249  # Kafka's longest topic name (`Topic.MAX_NAME_LENGTH`)
# The most ways one name may be split across a pattern (`work`): two free `*`/`+` and a few `?`. Java's
# matcher reads a 249-character name some 90,000 times for `.*.*x` and 7 million times for `.*.*.*x`
# (tests/integration/test_regex_work.py counts its reads).
MAX_WORK = 4 * (MAX_NAME + 1) ** 2
METACHARS = set("\\.[](){}*+?|^$")
FORBIDDEN_LITERALS = {" ": "a space", ",": "a comma (Kafka's LIST type splits the value there)"}
CLASS_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
# Java's String.trim() drops every char <= U+0020; its `\s` (the LIST splitter's) is [ \t\n\x0B\f\r].
_LIST_SPLIT = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")


class RegexProblem(ValueError):
    """The regex is invalid, or outside the grammar both engines read identically."""


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
    case_insensitive: bool = False  # kept in the input shape; inline flags are outside the grammar

    def to_input(self) -> dict[str, object]:
        return {"regex": self.regex, "case_insensitive": self.case_insensitive,
                "alternatives": [a.to_input() for a in self.alternatives]}

    def exact_names(self) -> list[str]:
        """The single names its exact alternatives match (the topics mm2gov creates ahead of MM2)."""
        return [] if self.case_insensitive else [a.literal_prefix for a in self.alternatives if a.exact]


def split_list(value: str) -> list[str]:
    """A Kafka LIST config value as `ConfigDef.parseType(LIST)` splits it: trimmed, split on
    commas with the whitespace around them; an empty value is an empty list (empty items stay)."""
    trimmed = _java_trim(value)
    return [] if not trimmed else _LIST_SPLIT.split(trimmed)


def _java_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


# ---- the parser: a tree of nodes -------------------------------------------------------------

@dataclass(frozen=True)
class Char:
    """One fixed character (a literal, an escaped punctuation mark or a one-character class)."""
    char: str


@dataclass(frozen=True)
class Other:
    """Anything that matches more than one fixed text (`.`, a class, an anchor in the middle)."""
    text: str


@dataclass(frozen=True)
class Anchor:
    char: str  # '^' or '$'


@dataclass(frozen=True)
class Group:
    alternatives: tuple[tuple[Piece, ...], ...]


@dataclass(frozen=True)
class Piece:
    atom: Char | Other | Anchor | Group
    quantifier: str = ""  # '', '?', '*', '+' or '{}' (lazy or not: the same whole-name matches)

    @property
    def quantified(self) -> bool:
        return bool(self.quantifier)


def _ambiguous(group: Group) -> bool:
    """A group a repetition must not apply to: it holds an alternation or a quantifier, at any depth.

    Repeating such a group (`(a*)*`, `(a|a)*`, `(x+){999}`) lets a backtracking matcher split one
    name in exponentially many ways; Java's Pattern and Python's re both are one."""
    if len(group.alternatives) > 1:
        return True
    return any(piece.quantified or (isinstance(piece.atom, Group) and _ambiguous(piece.atom))
               for alternative in group.alternatives for piece in alternative)


def work(alternatives: tuple[tuple[Piece, ...], ...], top: bool = True) -> int:
    """How many ways a backtracking matcher may split one name across the pattern, at most.

    A `*` or `+` may end at any of MAX_NAME + 1 places and a `?` at two; the ways multiply along an
    alternative and add up across alternatives. A repetition of one character or class settles at a single
    place when the next piece is a fixed character it cannot match (`[a-z]+\\.`) or the name's end: only
    the longest run can be followed there, so it multiplies nothing. Polynomial in the name's length, not
    exponential (repeated ambiguous groups are refused by the parser), so a cap on this bounds the time."""
    return sum(_sequence_work(alternative, top) for alternative in alternatives)


def _sequence_work(pieces: tuple[Piece, ...], top: bool) -> int:
    total = 1
    for index, piece in enumerate(pieces):
        ways = work(piece.atom.alternatives, False) if isinstance(piece.atom, Group) else 1
        if piece.quantifier in ("*", "+", "?") and not _settles(piece, pieces[index + 1:], top):
            ways = ways * (MAX_NAME + 1) if piece.quantifier != "?" else ways + 1
        total *= ways
    return total


def _settles(piece: Piece, rest: tuple[Piece, ...], top: bool) -> bool:
    """`piece` repeats one character or class, and what follows lets only its longest run go on."""
    if isinstance(piece.atom, (Group, Anchor)):
        return False
    if top and all(isinstance(p.atom, Anchor) and p.atom.char == "$" for p in rest):
        return True
    if not rest or rest[0].quantifier or not isinstance(rest[0].atom, Char):
        return False
    follower = rest[0].atom.char
    if isinstance(piece.atom, Char):
        return piece.atom.char != follower
    # a '.' or a class; the grammar's classes mean the same to Python, so Python's re may decide membership
    return piece.atom.text != "." and re.fullmatch(piece.atom.text, follower) is None


class _Parser:
    def __init__(self, regex: str) -> None:
        self.text = regex
        self.pos = 0

    def fail(self, message: str) -> RegexProblem:
        return RegexProblem(f"{message} at position {self.pos}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def regex(self, depth: int) -> tuple[tuple[Piece, ...], ...]:
        alternatives = [self.alternative(depth)]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.alternative(depth))
        return tuple(alternatives)

    def alternative(self, depth: int) -> tuple[Piece, ...]:
        pieces = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom(depth)
            quantifier = self.quantifier()
            if quantifier and isinstance(atom, Anchor):
                raise self.fail("a quantifier on an anchor is not allowed")
            if quantifier not in ("", "?") and isinstance(atom, Group) and _ambiguous(atom):
                raise self.fail("a repeated group may not contain a quantifier or '|': it makes Java's and "
                                "Python's backtracking matchers take exponential time on one name (a topic "
                                "name could stall MirrorMaker 2)")
            pieces.append(Piece(atom, quantifier))
        return tuple(pieces)

    def quantifier(self) -> str:
        """The quantifier after an atom ('' for none, '?' for optional, else a repeating one)."""
        char = self.peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            kind = char
        elif char == "{":
            match = re.compile(r"\{([0-9]{1,3})\}").match(self.text, self.pos)
            if not match:
                raise self.fail("only {n} repetition is allowed ({n,m} has a comma, which Kafka's LIST "
                                "type splits on)")
            self.pos = match.end()
            kind = "{}"
        else:
            return ""
        if self.peek() == "?":  # lazy: the same set of whole-name matches in both engines
            self.pos += 1
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("possessive or stacked quantifiers are not allowed")
        return kind

    def atom(self, depth: int) -> Char | Other | Anchor | Group:
        char = self.peek()
        if char == "(":
            if depth >= MAX_DEPTH:
                raise self.fail(f"groups nested more than {MAX_DEPTH} deep")
            self.pos += 1
            if self.text.startswith("?", self.pos):
                if not self.text.startswith("?:", self.pos):
                    raise self.fail("only plain (...) and non-capturing (?:...) groups are allowed: inline "
                                    "flags, comments, lookaround and named groups differ between Java and "
                                    "Python or are not needed")
                self.pos += 2
            inner = self.regex(depth + 1)
            if self.peek() != ")":
                raise self.fail("missing ')'")
            self.pos += 1
            return Group(inner)
        if char == "[":
            return self.character_class()
        if char == "\\":
            return Char(self.escaped())
        if char in ("^", "$"):
            self.pos += 1
            return Anchor(char)
        if char == ".":
            self.pos += 1
            return Other(".")
        if char in METACHARS:
            raise self.fail(f"'{char}' must be escaped as '\\{char}' here")
        self.pos += 1
        return Char(self.literal(char))

    def literal(self, char: str) -> str:
        if char in FORBIDDEN_LITERALS:
            raise self.fail(f"{FORBIDDEN_LITERALS[char]} is not allowed")
        if not ("!" <= char <= "~"):
            raise self.fail(f"character U+{ord(char):04X} is not allowed (printable ASCII only)")
        return char

    def escaped(self) -> str:
        self.pos += 1
        char = self.peek()
        if not char:
            raise self.fail("a pattern cannot end with '\\'")
        if char.isascii() and char.isalnum():
            raise self.fail(f"'\\{char}' is not allowed: escapes of letters and digits (classes, "
                            "backreferences, octal, quoting) mean different things to Java and Python; "
                            "only punctuation may be escaped")
        self.pos += 1
        return self.literal(char)

    def character_class(self) -> Char | Other:
        start = self.pos
        self.pos += 1
        if self.peek() == "^":
            self.pos += 1
        chars: set[str] | None = set()
        count = 0
        while self.peek() != "]":
            first = self.class_char()
            count += 1
            if self.peek() == "-":
                self.pos += 1
                last = self.class_char()
                if last < first:
                    raise self.fail(f"range {first}-{last} is out of order")
                chars = None
            elif chars is not None:
                chars.add(first)
        self.pos += 1
        text = self.text[start:self.pos]
        if count == 0:
            raise self.fail("empty character class")
        if chars is not None and len(chars) == 1 and not text.startswith("[^"):
            return Char(next(iter(chars)))  # [.] is a literal dot
        return Other(text)

    def class_char(self) -> str:
        char = self.peek()
        if char == "\\":
            return self.escaped()
        if char == "":
            raise self.fail("missing ']'")
        if char not in CLASS_CHARS:
            raise self.fail(f"'{char}' inside [...] must be escaped (or is not allowed): classes hold letters, "
                            "digits, '_', '.', ranges and escaped punctuation only")
        self.pos += 1
        return char


def parse(regex: str) -> tuple[tuple[Piece, ...], ...]:
    """The pattern's top-level alternatives; RegexProblem when outside the grammar."""
    if len(regex) > MAX_LENGTH:
        raise RegexProblem(f"longer than {MAX_LENGTH} characters")
    parser = _Parser(regex)
    tree = parser.regex(0)
    if parser.pos != len(regex):
        raise parser.fail("unbalanced ')'")
    ways = work(tree)
    if ways > MAX_WORK:
        raise RegexProblem(f"too many free repetitions: a name could be split {_rounded(ways)} ways across "
                           f"this pattern (at most {MAX_WORK:,}); each '*' or '+' that can stop anywhere "
                           "multiplies by 250 and each '?' by 2, so a crafted topic name could stall "
                           "MirrorMaker 2's matcher. Use at most two free '.*'/'+' per alternative, or "
                           "end a repetition at a character it cannot match ('[a-z]+\\.')")
    return tree


def _rounded(ways: int) -> str:
    return f"{ways:,}" if ways < 10**12 else f"about 10^{len(str(ways)) - 1}"


def check_java_compatible(regex: str) -> None:
    """Raise RegexProblem unless `regex` is inside the grammar both engines read identically."""
    parse(regex)


def analyse(regex: str) -> PatternFacts:
    """Alternatives with their literal prefixes; raises RegexProblem outside the grammar."""
    alternatives: list[Alternative] = []
    for alternative in parse(regex):
        alternatives += _expand(alternative)
    return PatternFacts(regex, tuple(alternatives))


def _expand(pieces: tuple[Piece, ...]) -> list[Alternative]:
    """A lone unquantified group is its own alternatives; anything else is one alternative."""
    inner = [p for p in pieces if not (isinstance(p.atom, Anchor) and _outer_anchor(p, pieces))]
    if len(inner) == 1 and isinstance(inner[0].atom, Group) and not inner[0].quantified:
        found: list[Alternative] = []
        for alternative in inner[0].atom.alternatives:
            found += _expand(alternative)
        return found
    return [_literal_prefix(pieces)]


def _outer_anchor(piece: Piece, pieces: tuple[Piece, ...]) -> bool:
    """'^' first or '$' last: no effect under MM2's whole-name matching."""
    assert isinstance(piece.atom, Anchor)
    return (piece.atom.char == "^" and piece is pieces[0]) or (piece.atom.char == "$" and piece is pieces[-1])


def _literal_prefix(pieces: tuple[Piece, ...]) -> Alternative:
    text = ""
    for index, piece in enumerate(pieces):
        atom = piece.atom
        if piece.quantified:
            return Alternative(text, False)
        if isinstance(atom, Char):
            text += atom.char
        elif isinstance(atom, Anchor) and ((atom.char == "^" and index == 0)
                                           or (atom.char == "$" and index == len(pieces) - 1)):
            continue
        elif isinstance(atom, Group) and len(atom.alternatives) == 1:
            inner = _literal_prefix(atom.alternatives[0])
            text += inner.literal_prefix
            if not inner.exact:
                return Alternative(text, False)
        else:
            return Alternative(text, False)
    return Alternative(text, True)


def java_list_matcher(items: Sequence[str]) -> Callable[[str], bool]:
    """MM2's topics/groups filter: the LIST's items joined as alternatives, matched against the whole name.
    Items inside this module's grammar read the same to Java and Python; others raise RegexProblem.
    No item matches nothing (mm2gov writes `groups=^$` for a flow without groups)."""
    for item in items:
        check_java_compatible(item)
    if not items:
        return lambda _name: False
    pattern = re.compile("|".join(items))
    return lambda name: pattern.fullmatch(name) is not None
