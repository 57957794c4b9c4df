"""A JSON document written back in its file's own form: every value that did not change keeps the
text it had (its line breaks, its spacing, `1e2` as `1e2`), and what changed is written with the
file's indent. `engram link` adds a hook to a settings file someone keeps in git; its diff should
hold engram's lines only. Stdlib only."""

from __future__ import annotations

import collections
import json
import math
import re

from .errors import EngramError

_FIRST_INDENT = re.compile(r"\n([ \t]+)\S")


class WouldChange(EngramError):
    """A JSON text that no rewrite keeps as it is (`strict_loads`)."""


def strict_loads(text: str) -> object:
    """`json.loads`, refusing (WouldChange) what a rewrite would change: a key given twice (the first
    would be dropped), `NaN` or `Infinity` (no JSON: a Node host would reject the file), a number a
    float cannot hold exactly (`1e400`, `1.00000000000000000001`)."""

    def unique(pairs: list[tuple[str, object]]) -> dict:
        data = dict(pairs)
        if len(data) < len(pairs):
            counts = collections.Counter(key for key, _ in pairs)
            twice = next(key for key, _ in pairs if counts[key] > 1)
            raise WouldChange(f'has the key "{twice}" twice, and a rewrite keeps only the last')
        return data

    def constant(name: str) -> object:
        raise WouldChange(f"holds {name}, which is no JSON")

    def exact(number: str) -> float:
        from decimal import Decimal

        value = float(number)
        if not math.isfinite(value) or Decimal(number) != Decimal(repr(value)):
            raise WouldChange(f"holds the number {number}, which a rewrite would change")
        return value

    return json.loads(text, object_pairs_hook=unique, parse_constant=constant, parse_float=exact)


_DECODER = json.JSONDecoder()
DEFAULT_INDENT = "  "


class _Node:
    """A value as the original text holds it: its span, and its members' nodes."""

    def __init__(self, start: int, end: int, value: object, members: dict[str, _Node] | list[_Node] | None = None):
        self.start, self.end, self.value, self.members = start, end, value, members


def dumps(value: object, like: str | None = None) -> str:
    """``value`` as JSON text ending in a line break; shaped like ``like`` (the file's text before
    the change) where it is given and parses, else indented by two spaces."""
    if not like or not like.strip():
        return _plain(value, DEFAULT_INDENT, 0) + "\n"
    try:
        original = _node(like, 0)
    except (ValueError, IndexError):
        return _plain(value, DEFAULT_INDENT, 0) + "\n"
    indent = _indent(like)
    return _Writer(like, indent).write(value, original, 0) + "\n"


def _indent(text: str) -> str:
    """The file's indent: the blank start of its first indented line (the top object's members)."""
    found = _FIRST_INDENT.search(text)
    return found.group(1) if found else DEFAULT_INDENT


def _plain(value: object, indent: str, depth: int) -> str:
    """``value`` as `json.dumps` writes it, indented for ``depth``."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return text.replace("\n", "\n" + indent * depth)


def _same(value: object, node: _Node) -> bool:
    """Whether ``value`` is the node's value as written: member order counts, `1` is not `true`."""
    return json.dumps(value, ensure_ascii=False) == json.dumps(node.value, ensure_ascii=False)


class _Writer:
    def __init__(self, text: str, indent: str) -> None:
        self.text = text
        self.indent = indent

    def write(self, value: object, node: _Node | None, depth: int) -> str:
        if node is not None and _same(value, node):
            return self.text[node.start : node.end]
        if isinstance(value, dict) and value and node is not None and isinstance(node.members, dict):
            members = node.members
            items = [
                f"{json.dumps(k, ensure_ascii=False)}: {self.write(v, members.get(k), depth + 1)}"
                for k, v in value.items()
            ]
            return self._container("{", items, "}", depth)
        if isinstance(value, list) and value and node is not None and isinstance(node.members, list):
            return self._container("[", self._elements(value, node.members, depth), "]", depth)
        return _plain(value, self.indent, depth)

    def _elements(self, values: list, originals: list[_Node], depth: int) -> list[str]:
        """Each element written from the original element it equals, else from the one at its place."""
        unused = list(originals)
        out = []
        for i, value in enumerate(values):
            equal = next((n for n in unused if _same(value, n)), None)
            if equal is not None:
                unused.remove(equal)
            out.append(self.write(value, equal or (originals[i] if i < len(originals) else None), depth + 1))
        return out

    def _container(self, opening: str, items: list[str], closing: str, depth: int) -> str:
        inner = "\n" + self.indent * (depth + 1)
        return opening + inner + ("," + inner).join(items) + "\n" + self.indent * depth + closing


def _node(text: str, position: int) -> _Node:
    """The value starting at ``position`` (after blanks), with its span; ValueError where the text
    is no JSON this reader follows."""
    start = _skip(text, position)
    opening = text[start]
    if opening == "{":
        return _object(text, start)
    if opening == "[":
        return _array(text, start)
    value, end = _DECODER.raw_decode(text, start)
    return _Node(start, end, value)


def _object(text: str, start: int) -> _Node:
    members: dict[str, _Node] = {}
    position = _skip(text, start + 1)
    while text[position] != "}":
        key, position = _DECODER.raw_decode(text, position)
        if not isinstance(key, str):
            raise ValueError("a key must be a string")
        position = _skip(text, position)
        if text[position] != ":":
            raise ValueError("a key must be followed by a colon")
        members[key] = _node(text, position + 1)
        position = _after_member(text, members[key].end, "}")
    return _Node(start, position + 1, {k: n.value for k, n in members.items()}, members)


def _array(text: str, start: int) -> _Node:
    elements: list[_Node] = []
    position = _skip(text, start + 1)
    while text[position] != "]":
        elements.append(_node(text, position))
        position = _after_member(text, elements[-1].end, "]")
    return _Node(start, position + 1, [n.value for n in elements], elements)


def _skip(text: str, position: int) -> int:
    """Past the blanks at ``position``."""
    while position < len(text) and text[position] in " \t\n\r":
        position += 1
    return position


def _after_member(text: str, end: int, closing: str) -> int:
    """Where the next member starts, or the closing bracket; a trailing comma (JSONC) is passed over."""
    position = _skip(text, end)
    if text[position] == ",":
        return _skip(text, position + 1)
    if text[position] != closing:
        raise ValueError("members must be separated by commas")
    return position
