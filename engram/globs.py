"""Gitignore-style globs for `applies_to` (stdlib only: hooks match them on every file event).

Supported: `*` and `?` within one path segment, `**` across segments, `[...]`
classes, `{a,b}` alternatives, a leading or inner `/` anchoring the pattern
at the project root, a pattern without `/` matching at any depth, and a
trailing `/` matching only what lies inside a directory. As in .gitignore,
a pattern that matches a directory also matches everything under it.
Paths are posix paths relative to the project root.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WILDCARDS = re.compile(r"[*?\[\]{},]")


def matches(pattern: str, path: str) -> bool:
    return any(regex.match(path) for regex in _compiled(pattern))


def literal_length(pattern: str) -> int:
    """How specific a pattern is: its characters that are not wildcards."""
    return len(_WILDCARDS.sub("", pattern))


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> tuple[re.Pattern[str], ...]:
    return tuple(r for r in (_translate(p) for p in expand_braces(pattern.strip())) if r is not None)


def expand_braces(pattern: str) -> list[str]:
    """`src/{a,b}/*.{ts,tsx}` -> four patterns; an unclosed `{` stays literal."""
    start = pattern.find("{")
    if start == -1:
        return [pattern]
    group = _brace_group(pattern, start)
    if group is None:
        return [pattern]
    end, options = group
    head, tail = pattern[:start], pattern[end + 1 :]
    return [expanded for option in options for expanded in expand_braces(head + option + tail)]


def _brace_group(pattern: str, start: int) -> tuple[int, list[str]] | None:
    """The index of the matching `}` and the top-level comma-separated options."""
    depth, begin = 0, start + 1
    options: list[str] = []
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index, [*options, pattern[begin:index]]
        elif char == "," and depth == 1:
            options.append(pattern[begin:index])
            begin = index + 1
    return None


def _translate(pattern: str) -> re.Pattern[str] | None:
    if pattern.startswith("./"):
        pattern = pattern[2:]
    directory_only = pattern.endswith("/")
    body = pattern.strip("/")
    if not body or body.startswith("#"):
        return None
    segments = _collapse_globstars(body.split("/"))
    if "/" not in pattern.rstrip("/") and segments[0] != "**":
        segments.insert(0, "**")  # no slash: the name matches at any depth
    regex = "".join(_segment(seg, last=i == len(segments) - 1) for i, seg in enumerate(segments))
    inside = "/.*" if directory_only else "(?:/.*)?"  # a matched directory covers its contents
    return re.compile(f"^{regex}{inside}$", re.DOTALL)


def _collapse_globstars(segments: list[str]) -> list[str]:
    out: list[str] = []
    for seg in segments:
        if not (seg == "**" and out and out[-1] == "**"):
            out.append(seg)
    return out


def _segment(segment: str, last: bool) -> str:
    if segment == "**":
        return ".*" if last else "(?:.*/)?"
    return _segment_regex(segment) + ("" if last else "/")


def _segment_regex(segment: str) -> str:
    out, index = [], 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and index + 1 < len(segment):
            index += 1
            out.append(re.escape(segment[index]))
        elif char == "[" and (close := _class_end(segment, index)) != -1:
            out.append(_char_class(segment[index + 1 : close]))
            index = close
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _class_end(segment: str, start: int) -> int:
    """The `]` closing a class opened at `start` (a `]` right after `[` or `[!` is literal)."""
    index = start + 1
    if index < len(segment) and segment[index] in "!^":
        index += 1
    if index < len(segment) and segment[index] == "]":
        index += 1
    return segment.find("]", index)


def _char_class(content: str) -> str:
    negate = content[:1] in ("!", "^")
    if negate:
        content = content[1:]
    escaped = content.replace("\\", "\\\\").replace("[", "\\[")
    if escaped.startswith("]"):
        escaped = "\\" + escaped
    return f"[^/{escaped}]" if negate else f"[{escaped}]"
