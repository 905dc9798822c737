"""The bounded YAML reader: a repo file as data with the line of every node, or problems, never a traceback.

Bounded in bytes, nesting, aliases and expanded nodes, whichever parser layer (libyaml or PyYAML's own)
stops a hostile document first; text with control characters or Unicode line breaks is refused at its line;
a path that resolves outside the repo is refused unread (`confined`). What the data means is the loader's
(config/loader.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

NodePath = tuple[str | int, ...]
# libyaml when present: ~10x faster, same nodes. libyaml has limits of its own (since PyYAML 6.0.4 its
# scanner stops flow collections nested past its own depth, before mm2gov's composer sees them), so a
# document it refuses is read again by PyYAML's pure-Python parser, which is iterative and has none:
# mm2gov's bounded composer then gives its answer in its own words, whichever layer stopped first.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PURE_LOADER = yaml.SafeLoader


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass
class Document:
    """One YAML file: its data and the line of each node path."""

    file: str
    data: Any
    lines: dict[NodePath, int] = field(default_factory=dict)

    def line(self, path: NodePath) -> int | None:
        """The line of `path`, else of its nearest ancestor."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]


def dotted(path: NodePath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# Limits on one YAML file. A governance repo is small hand-written YAML: a tenant file is
# a few KiB and nests 5 levels (flows[0].topics[1]), clusters.yaml a few hundred lines.
# Anything past these is hostile or broken, and refused before anything walks it: an
# 843-byte "billion laughs" alias bomb expands to 9**9 nodes, and 20,000 nested `[`
# exhaust Python's recursion.
MAX_FILE_BYTES = 1024 * 1024  # 1 MiB per file
MAX_DEPTH = 32  # nesting of mappings and sequences; real files use 5
MAX_ALIASES = 200  # `*name` references per file; real files use a few (shared security blocks)
MAX_NODES = 100_000  # nodes per file once every alias is expanded; a 1,000-cluster clusters.yaml has 15,000

# Characters refused in every key and value: C0 (tab and newline included), DEL, C1 (U+0085
# included), U+2028 and U+2029. Generated files (MM2 .properties, YAML, Prometheus rules) are
# line-based: a newline in a topic regex or a bootstrap address starts a new key there
# (FIELD.md pitfall 9). No field of the schema is free text, so nothing legitimate needs them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Refused(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def confined(root: Path, path: Path, file: str) -> Problem | None:
    """Why the repo file `path` is not read, or None when it may be. A repo file is a regular file whose real
    path is inside the repo's: a symlink (to a file, or `tenants/` or `policies/` itself) cannot make mm2gov
    read a file outside the checkout, nor an error of the parser or of OPA echo its content into a pull
    request; a FIFO or a device, which would block or never end, is not read either."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling symlink, a loop
        return Problem(file, None, "cannot read: a broken or looping symlink")
    if not real.is_relative_to(root.resolve()):
        return Problem(file, None, "refused: it resolves outside the repository (a symlink); "
                                   "mm2gov reads nothing outside the repository")
    if not real.is_file():
        return Problem(file, None, "refused: not a regular file")
    return None


def read_yaml(path: Path, file: str, problems: list[Problem], root: Path | None = None) -> Document | None:
    """The YAML document of `path`, or None with its problems. With `root`, `path` is a repo file: read only
    if `confined` to the repo."""
    raw = read_bytes(path, file, problems, root)
    return None if raw is None else parse_yaml(raw, file, problems)


def read_bytes(path: Path, file: str, problems: list[Problem], root: Path | None = None) -> bytes | None:
    """The bytes of `path` (at most MAX_FILE_BYTES), or None with its problem. With `root`, `path` is a repo
    file: read only if `confined` to the repo."""
    refused = confined(root, path, file) if root is not None else None
    if refused is not None:
        problems.append(refused)
        return None
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        problems.append(Problem(file, None, f"cannot read: {exc.strerror}"))
        return None
    if len(raw) > MAX_FILE_BYTES:
        problems.append(Problem(file, None, f"larger than {MAX_FILE_BYTES // 1024 // 1024} MiB, the limit for "
                                            "one governance file (split it, or remove what is not governance)"))
        return None
    return raw


def parse_yaml(raw: bytes, file: str, problems: list[Problem]) -> Document | None:
    """The YAML document `file` holds as `raw`, or None with its problems: a function of the two alone."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(Problem(file, None, "not UTF-8 text"))
        return None
    try:
        return _parse(text, file, FAST_LOADER, problems)
    except yaml.YAMLError as exc:
        refused = exc
    if FAST_LOADER is not PURE_LOADER:
        try:
            return _parse(text, file, PURE_LOADER, problems)
        except yaml.YAMLError as exc:  # the pure parser refuses it too: a syntax error, said where
            refused = exc
    problems.append(_syntax_problem(file, refused))
    return None


def _syntax_problem(file: str, exc: yaml.YAMLError) -> Problem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        return Problem(file, mark.line + 1 if mark else None, f"YAML syntax: {exc.problem or exc}")
    return Problem(file, None, f"YAML: {exc}")


def _parse(text: str, file: str, loader_class: type, problems: list[Problem]) -> Document | None:
    """The document as `loader_class` reads it, or None with mm2gov's problems; raises the parser's YAMLError."""
    loader = loader_class(text)
    try:
        node = _compose(loader)
        document = Document(file, None)
        before = len(problems)
        clean = node is None or _index(node, document, problems)
        problems[before:] = sorted(problems[before:], key=lambda p: p.line or 0)
        if not clean:
            return None
        document.data = loader.construct_document(node) if node is not None else None
    except _Refused as exc:
        problems.append(Problem(file, exc.line, f"YAML: {exc.message}"))
        return None
    finally:
        loader.dispose()
    return document


def _compose(loader: Any) -> yaml.Node | None:
    """The single document's node graph, as PyYAML's composer builds it, from the event stream.

    Iterative (nothing recurses on the input) and bounded: nesting, aliases and the size of the
    document with every alias expanded are checked event by event, before any node is walked.
    """
    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()  # DocumentStart
    anchors: dict[str, yaml.Node] = {}
    sizes: dict[int, int] = {}  # id(anchored node) -> its node count with aliases expanded, once closed
    # The collections being composed, outermost first: [node, its expanded node count so far, its anchor]
    stack: list[list[Any]] = [[yaml.SequenceNode(None, [], None, None), 0, None]]  # holds the root
    aliases = total = 0  # total: nodes of the document so far, aliases expanded
    resolve, get_event = loader.resolve, loader.get_event
    while True:
        event = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            size = 1
            if event.anchor is not None:
                _new_anchor(anchors, event, node)
                sizes[id(node)] = 1
        elif kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
            if len(stack) > MAX_DEPTH:
                raise _Refused(event.start_mark.line + 1,
                               f"nested deeper than {MAX_DEPTH} levels; a governance file nests 5 or 6")
            node_kind = yaml.SequenceNode if kind is yaml.SequenceStartEvent else yaml.MappingNode
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(node_kind, None, event.implicit)
            node = node_kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                _new_anchor(anchors, event, node)  # aliases to it are allowed once it is closed
            total += 1
            stack.append([node, 1, event.anchor])
            continue
        elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
            node, size, anchor = stack.pop()
            node.end_mark = event.end_mark
            if kind is yaml.MappingEndEvent:
                node.value = list(zip(node.value[0::2], node.value[1::2], strict=True))
            if anchor is not None:
                sizes[id(node)] = size
            stack[-1][0].value.append(node)
            stack[-1][1] += size
            continue  # its nodes were counted in total as they came
        elif kind is yaml.AliasEvent:
            line = event.start_mark.line + 1
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _Refused(line, f"more than {MAX_ALIASES} aliases (*name) in one file; "
                                     "a governance file needs a few at most")
            node = anchors.get(event.anchor)
            if node is None:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias *{event.anchor}",
                                                  event.start_mark)
            if id(node) not in sizes:
                raise _Refused(line, f"alias *{event.anchor} refers to a node that contains it "
                                     "(a recursive structure)")
            size = sizes[id(node)]  # one shared node, but whoever expands it pays in full
        else:  # DocumentEndEvent
            break
        total += size
        if total > MAX_NODES:
            what = "nodes once aliases are expanded (an alias bomb?)" if aliases else "nodes"
            raise _Refused(event.start_mark.line + 1, f"more than {MAX_NODES} {what}; "
                                                      "a governance file has a few hundred")
        stack[-1][0].value.append(node)
        stack[-1][1] += size
    if not loader.check_event(yaml.StreamEndEvent):
        raise yaml.composer.ComposerError(None, None, "expected a single document, found another one",
                                          get_event().start_mark)
    get_event()  # StreamEnd
    [root] = stack[0][0].value
    return root


def _new_anchor(anchors: dict[str, yaml.Node], event: Any, node: yaml.Node) -> None:
    if event.anchor in anchors:
        first = anchors[event.anchor].start_mark.line + 1
        raise yaml.composer.ComposerError(None, None, f"found duplicate anchor &{event.anchor} (first at line {first})",
                                          event.start_mark)
    anchors[event.anchor] = node


def _index(root: yaml.Node, document: Document, problems: list[Problem]) -> bool:
    """Record the line of every node path; report duplicate keys, and control characters (then False).

    Iterative, over the tree with aliases expanded (bounded by MAX_NODES). Keys merged in with
    `<<: *anchor` take the lines of the anchored mapping unless the mapping has them itself.
    """
    clean = True
    todo: list[tuple[yaml.Node, NodePath, bool]] = [(root, (), False)]  # node, path, merged in by `<<`
    while todo:
        node, path, merged = todo.pop()
        document.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            clean &= _check_text(node, path, "", document.file, problems)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend((item, (*path, index), merged) for index, item in reversed(list(enumerate(node.value))))
        elif isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            children = []
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                    children += [(source, path, True) for source in sources if isinstance(source, yaml.MappingNode)]
                    continue
                if isinstance(key_node, yaml.ScalarNode) and not _check_text(key_node, path, "in a key ",
                                                                             document.file, problems):
                    clean = False
                    continue
                key = str(key_node.value)
                if key in seen and not merged:
                    problems.append(Problem(document.file, key_node.start_mark.line + 1,
                                            f"{dotted((*path, key))}: duplicate key '{key}'"))
                seen.add(key)
                if merged:  # the mapping's own keys win, whatever their order
                    document.lines.setdefault((*path, key), key_node.start_mark.line + 1)
                else:
                    document.lines[(*path, key)] = key_node.start_mark.line + 1
                children.append((value_node, (*path, key), merged))
            todo.extend(reversed(children))
    return clean


def _check_text(node: yaml.ScalarNode, path: NodePath, where: str, file: str, problems: list[Problem]) -> bool:
    found = _CONTROL.search(node.value)
    if found is None:
        return True
    problems.append(Problem(file, node.start_mark.line + 1,
                            f"{dotted(path) or '(top level)'}: control character U+{ord(found.group()):04X} "
                            f"{where}is not allowed (it would start a new line in generated files)"))
    return False


