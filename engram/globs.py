"""Gitignore-style globs for `applies_to` (stdlib only: hooks match them on every file event).

Supported: `*` and `?` within one path segment, `**` across segments, `[...]`
classes, `{a,b}` alternatives, a leading or inner `/` anchoring the pattern
at the project root, a pattern without `/` matching at any depth, and a
trailing `/` matching only what lies inside a directory. As in .gitignore,
a pattern that matches a directory also matches everything under it. In a
memory's list, a pattern starting with `!` excludes what it matches from the
patterns before it (`applying`). Paths are posix paths relative to the project root.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WILDCARDS = re.compile(r"[*?\[\]{},]")
# A pattern's `{a,b}` groups multiply: `{a,b}` written 24 times is 16 million patterns. Past this
# many, the rest are left out (a real glob has a handful).
MAX_EXPANSIONS = 256


def matches(pattern: str, path: str) -> bool:
    path = composed(path)
    return any(regex.match(path) for regex in _compiled(pattern))


def composed(text: str) -> str:
    """Text in Unicode's composed form (NFC): macOS hands tools a path as its file system stores it,
    often decomposed (`hướng-dẫn`, `ガイド` as base letters and marks), while a memory's glob is typed
    composed. Both are matched composed."""
    if text.isascii():
        return text
    import unicodedata  # a C module, only for a path or pattern that is not ASCII

    return unicodedata.normalize("NFC", text)


def applying(patterns: list[str], path: str) -> list[str]:
    """The globs of ``patterns`` that make a memory apply to ``path``, read as .gitignore reads a
    list: one starting with `!` excludes what it matches from the globs before it, not after
    (`services/billing/**`, then `!services/billing/legacy/**`); [] when none applies."""
    found: list[str] = []
    for pattern in patterns:
        if not pattern.startswith("!"):
            found += [pattern] if matches(pattern, path) else []
        elif matches(pattern[1:], path):
            found = []
    return found


def literal_length(pattern: str) -> int:
    """How specific a pattern is: its characters that are not wildcards."""
    return len(_WILDCARDS.sub("", pattern))


# A path a text writes: two segments or more joined by `/` (`src/api/users.py`, `packages/back-end/`).
_TEXT_PATH = re.compile(r"[\w.@-]+(?:/[\w.@-]+)+")
MAX_TEXT_PATHS = 20  # a pasted stack trace names hundreds


def paths_in(text: str) -> list[str]:
    """The paths a text writes, each also from each of its folders on (`/home/me/app/src/a.py` as
    `app/src/a.py`, `src/a.py`, ...): a task names a file as its writer sees it, not from the
    project's top."""
    out: list[str] = []
    for found in _TEXT_PATH.findall(text)[:MAX_TEXT_PATHS]:
        parts = [part for part in found.split("/") if part not in ("", ".", "..")]
        out += ["/".join(parts[start:]) for start in range(len(parts) - 1)]
    return list(dict.fromkeys(out))


def holds_a_path(patterns: list[str], paths: list[str]) -> bool:
    """Whether a pattern naming a folder (`src/api/**`, `packages/web/`; not `**/*.py` or `*.md`,
    which any project's files match) applies to one of the paths."""
    return any(_names_a_folder(glob) for path in paths for glob in applying(patterns, path))


def _names_a_folder(pattern: str) -> bool:
    first, slash, _ = pattern.strip().lstrip("/").partition("/")
    return bool(slash and first and not _WILDCARDS.search(first))


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> tuple[re.Pattern[str], ...]:
    return tuple(r for r in (_translate(p) for p in expand_braces(composed(pattern.strip()))) if r is not None)


def expand_braces(pattern: str, limit: int = MAX_EXPANSIONS) -> list[str]:
    """`src/{a,b}/*.{ts,tsx}` -> four patterns, at most ``limit``; an unclosed `{` stays literal."""
    out: list[str] = []
    pending = [pattern]  # depth first, in the order written: a stack of partly expanded patterns
    while pending and len(out) < limit:
        current = pending.pop()
        start = current.find("{")
        group = _brace_group(current, start) if start != -1 else None
        if group is None:
            out.append(current)
            continue
        end, options = group
        pending += [current[:start] + option + current[end + 1 :] for option in reversed(options)]
    return out


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
    """A segment's regex. Each part between two `*` is matched at its first place (an atomic group):
    for parts of fixed length that finds a match whenever there is one, and `*a*a*a*a*b` on a long
    name costs no backtracking through every way of placing the `a`s."""
    parts = _star_parts(segment)
    middle = [f"(?>[^/]*?{part})" for part in parts[1:-1]]
    return parts[0] + "".join(middle) + ("[^/]*" + parts[-1] if len(parts) > 1 else "")


def _star_parts(segment: str) -> list[str]:
    """The regexes of the parts of a segment between its `*` wildcards."""
    parts: list[str] = []
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            parts.append("".join(out))
            out = []
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
    return [*parts, "".join(out)]


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
