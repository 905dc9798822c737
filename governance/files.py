"""Writing files: secrets 0600, the rest 0644, parents created (the secret store and the local stack); the one
YAML dumper every written YAML file goes through, indented JSON (`indented_json`), and the lines of Java
properties files (`property_line`, `property_comment`)."""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable
from functools import lru_cache
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

import javaproperties
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

STR_TAG, INT_TAG, BOOL_TAG, NULL_TAG = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "bool", "null"))
MAP_TAG, SEQ_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"

Render = Callable[[], str]  # how to make a generated file's text, called where (and when) it is written


class FastRepresent:
    """PyYAML's safe representer, the same nodes built without its per-object dispatch.

    The emitter is libyaml's, but turning data into nodes is Python: per object a type lookup through the
    MRO, an alias check and a method call, and per scalar two passes of the implicit-tag regexes when the
    serializer decides whether its tag can be left out (most of `generate`'s rendering time). Here plain
    str, int, bool, None, dict and list become nodes in one function, with the same tags, styles and
    anchors (a dict or list met twice is one node, which the serializer writes as an alias, as
    `represent_data` does); anything else (floats, other types) goes through the safe representer as
    before. Implicit tags of scalars are cached per value (`resolve`): the resolvers are the class's and
    no path resolver is set. So the output is the same bytes (tests/unit/test_yaml_dumper.py).
    """

    default_style: str | None
    default_flow_style: bool | None
    sort_keys: bool
    represented_objects: dict[int, Node]
    object_keeper: list[Any]
    alias_key: int | None

    def represent(self, data: Any) -> None:
        if self.default_style is not None or self.default_flow_style is None:  # styles chosen per node
            super().represent(data)  # type: ignore[misc]
            return
        self.serialize(self._node(data))  # type: ignore[attr-defined]
        self.represented_objects, self.object_keeper, self.alias_key = {}, [], None

    def _node(self, data: Any) -> Node:
        kind = type(data)
        if kind is str:
            return ScalarNode(STR_TAG, data)
        if kind is dict or kind is list:
            known = self.represented_objects.get(id(data))
            if known is not None:
                return known
            self.object_keeper.append(data)
            if kind is list:
                sequence = self.represented_objects[id(data)] = SequenceNode(SEQ_TAG, [],
                                                                             flow_style=self.default_flow_style)
                sequence.value.extend(self._node(item) for item in data)
                return sequence
            mapping = self.represented_objects[id(data)] = MappingNode(MAP_TAG, [], flow_style=self.default_flow_style)
            items = list(data.items())
            if self.sort_keys:
                with contextlib.suppress(TypeError):  # keys of mixed types: in their order, as PyYAML does
                    items = sorted(items)
            mapping.value.extend((self._node(key), self._node(value)) for key, value in items)
            return mapping
        if kind is bool:
            return ScalarNode(BOOL_TAG, "true" if data else "false")
        if kind is int:
            return ScalarNode(INT_TAG, str(data))
        if data is None:
            return ScalarNode(NULL_TAG, "null")
        node: Node = self.represent_data(data)  # type: ignore[attr-defined]
        return node

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode and not self.yaml_path_resolvers:  # type: ignore[attr-defined]
            return _scalar_tag(type(self), value, implicit)
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[misc]
        return tag


@lru_cache(maxsize=1 << 16)
def _scalar_tag(dumper: type, value: str, implicit: tuple[bool, bool]) -> str:
    tag: str = yaml.resolver.BaseResolver.resolve(dumper, ScalarNode, value, implicit)  # type: ignore[arg-type]
    return tag


# libyaml's emitter (PyYAML's C dumper, several times faster than its pure-Python one, same safe representer)
# when PyYAML was built with it, as the locked wheels are; the pure-Python SafeDumper otherwise; with the
# fast representer in front (FastRepresent)
YAML_DUMPER = type("YamlDumper", (FastRepresent, getattr(yaml, "CSafeDumper", yaml.SafeDumper)), {})


class _NotPlain(Exception):
    """A value `indented_json` leaves to the json module (a key that is not a string, a tuple, a subclass)."""


def indented_json(value: Any, indent: int = 1) -> str:
    """`json.dumps(value, indent=indent, ensure_ascii=False)`, the same text, about twice as fast.

    The json module's C encoder writes no indentation, so with `indent` every value goes through its
    pure-Python encoder, a chain of generators (half of rendering a Grafana dashboard). Here plain JSON
    values (dict with str keys, list, str, int, float, bool, None) are written by one recursive function,
    strings escaped by the json module's own C function; anything else is left to `json.dumps` whole.
    """
    parts: list[str] = []
    step = " " * indent

    def write(item: Any, newline: str) -> None:
        kind = type(item)
        if kind is str:
            parts.append(encode_basestring(item))
        elif kind is dict or kind is list:
            if not item:
                parts.append("{}" if kind is dict else "[]")
                return
            inner = newline + step
            separator = "," + inner
            if kind is dict:
                parts.append("{" + inner)
                for index, (key, member) in enumerate(item.items()):
                    if type(key) is not str:
                        raise _NotPlain
                    parts.append((separator if index else "") + encode_basestring(key) + ": ")
                    write(member, inner)
                parts.append(newline + "}")
            else:
                parts.append("[" + inner)
                for index, member in enumerate(item):
                    if index:
                        parts.append(separator)
                    write(member, inner)
                parts.append(newline + "]")
        elif item is None or kind is bool:
            parts.append("null" if item is None else "true" if item else "false")
        elif kind is int or (kind is float and item == item and item not in (math.inf, -math.inf)):
            parts.append(repr(item))
        else:  # NaN and infinities (json's words for them), other types
            raise _NotPlain

    try:
        write(value, "\n")
    except (_NotPlain, RecursionError):
        return json.dumps(value, indent=indent, ensure_ascii=False)
    return "".join(parts)


# Java properties lines, escaped by javaproperties (pure Python, a few microseconds a line). Most lines of the
# flows' MM2 and logging files repeat from flow to flow (the settings of a cluster pair, the layouts): each
# distinct line is escaped once.
property_line = lru_cache(maxsize=1 << 14)(javaproperties.join_key_value)
property_comment = lru_cache(maxsize=1 << 12)(javaproperties.to_comment)


def write_private(path: Path, data: bytes) -> None:
    """Create or replace `path` readable by its owner only (never briefly wider)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)


def write_public(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
