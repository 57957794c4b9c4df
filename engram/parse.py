"""Parse one memory file: frontmatter, defaults, and the agent-visible body.

YAML is read with the base loader, so every scalar comes back as the
string the author wrote (``2026-06-30`` stays a string, ``on`` is not
``True``); fields that are numbers or lists are converted here, explicitly.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple

from . import gate
from .errors import EngramError
from .memory_format import ATX_HEADING, AUTHORITIES, ID_PATTERN, MAX_ID_CHARS, TYPES
from .nearmiss import near_miss
from .terms import occurrences

TYPE_ALIASES = {"workflow": "skill", "rules": "rule", "skills": "skill"}
FOLDER_TYPES = {"rules": "rule", "skills": "skill", "knowledge": "knowledge"}
CONFIDENCES = ("high", "medium", "low")
LIFECYCLES = ("active", "review_due", "superseded", "archived")
LEVELS = {
    "base": 0,
    "basic": 0,
    "core": 0,
    "foundation": 0,
    "foundational": 0,
    "fundamental": 0,
    "intermediate": 1,
    "mid": 1,
    "advanced": 2,
    "deep": 2,
}
MAX_LEVEL = 1000
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_DEPTH = 8  # a field is a scalar or a list of scalars; nesting beyond this is never a memory
MAX_SCALAR_CHARS = 16 * 1024
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_PUNCTUATION = re.compile(r"""['"][!-/:-@\[-`{-~]{1,3}['"]""")  # YAML's own ',' or ']', safe to show
# What a YAML problem means in a memory file, where the same few mistakes recur.
YAML_HINTS = {
    "mapping values are not allowed": "a value holding ': ' needs quotes",
    # `applies_to: **/*.ts`, as Cursor writes globs: YAML reads a leading * as an alias
    "scanning an alias": "a value starting with '*' needs quotes: \"**/*.ts\"",
    "found undefined alias": "a value starting with '*' needs quotes: \"**/*.ts\"",
}
FULL_WIDTH_COLON = "\uff1a"
# List items written with a CJK comma (`tags: [決済、請求]`) are one item to YAML.
WIDE_SEPARATORS = ("\u3001", "\uff0c", "\uff1b")  # 、 ， ；
# Every frontmatter key parse_memory reads; others are tolerated, and a near miss of one is a warning.
READ_KEYS = (
    "id", "type", "tags", "directive", "summary", "triggers", "applies_to", "depends_on", "level",
    "dependency_depth", "depth", "confidence", "authority", "lifecycle", "valid_until", "role", "roles", "updated",
)  # fmt: skip
# Keys of other tools' rule files that say what one of engram's keys says (Cursor, Claude Code skills and rules).
OTHER_TOOLS_KEYS = {
    "globs": "applies_to",
    "paths": "applies_to",
    "description": "directive",
}
# Cursor's `alwaysApply: true` (a rule for every request) is engram's `always` tag; `false` says nothing.
ALWAYS_APPLY = "alwaysapply"
HIDDEN_SECTIONS = ("context", "example", "examples", "origin")
HIDDEN_ONLY = (
    "agents see only the title: all the text is under ## Context, ## Example or ## Origin"
    " (add a directive or a ## Content section)"
)
NO_TEXT = "the file holds no text for agents, only a title or nothing (add a directive or a body)"
_NULLS = ("", "~", "null", "none")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)
# A setext heading: one line of text, underlined with = (level 1) or - (level 2).
_SETEXT_TEXT = re.compile(r"^ {0,3}(?![-*+>#=]|\d+[.)]|```|~~~)\S")  # not a list item, quote, fence or rule
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TOP_LEVEL_KEY = re.compile(r"""^["']?([^\s"'#:][^"':]*)["']?[ \t]*:(?:[ \t]|$)""")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
# An unresolved merge: git's markers at the start of lines, an opening one and a closing one after it.
_CONFLICT = re.compile(r"^<{7}(?: |$)(?:.*\n)*?>{7}(?: |$)", re.M)
_FENCE = re.compile(r"^\s*(```|~~~)")
_TITLE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)  # ATX_HEADING of level 1, on text with "\n" line breaks
# Every hidden-section heading contains one of these (ATX or setext); most bodies have none and skip
# the line-by-line pass.
_ATX_HINT_RE = r"##[ \t]+\s*(?:context|example|origin)"
_SETEXT_HINT_RE = r"(?:context|examples?|origin)[ \t]*[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+ *-"
_HIDDEN_HEADING_HINT = re.compile(f"{_ATX_HINT_RE}|{_SETEXT_HINT_RE}", re.I)
# On lowered text, each alone: a pattern that starts with a literal skips to it in C, and the
# setext one is tried only where one of its words starts.
_ATX_HINT_LOWER = re.compile(_ATX_HINT_RE)
_SETEXT_HINT_LOWER = re.compile(_SETEXT_HINT_RE)
_SETEXT_HINT_WORDS = ("context", "example", "origin")
# The only non-ASCII letters that re.IGNORECASE matches with ASCII ones (İ, ı, ſ, the Kelvin sign):
# where none occurs, the lowered text holds a hint exactly where the text holds one in any case.
_ASCII_CASE_TWINS = ("\u0130", "\u0131", "\u017f", "\u212a")
# Line breaks of str.splitlines other than "\n"; bodies rarely hold any.
_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class ParseError(EngramError):
    """A memory file that cannot be used; ``line`` is 1-based when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.problems: list[ParseError] = [self]

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


class FieldErrors(ParseError):
    """Every invalid field of one file, each with the line of its key: all are reported at once."""

    def __init__(self, errors: list[ParseError]) -> None:
        super().__init__(errors[0].reason, errors[0].line)
        self.problems = errors


class Memory(
    namedtuple(
        "Memory",
        "id type title body tags directive summary triggers applies_to depends_on level confidence authority"
        " lifecycle valid_until roles updated warnings unseen",
        defaults=((), ""),
    )
):
    """A parsed memory file. ``warnings``: (reason, line) pairs about a file that is valid but
    probably not what its author meant; ``unseen``: text of the file agents may never be shown
    (the frontmatter and the hidden sections), which a commit still publishes.
    Frontmatter keys engram does not know are tolerated and not kept. A named tuple (docs/architecture.md)."""

    __slots__ = ()


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Return (frontmatter, body, body_start_line)."""
    text = text.removeprefix("\ufeff")  # editors on Windows save a byte-order mark
    if "\r" in text and "\n" not in text:  # classic Mac line endings: lone CRs end its lines
        text = text.replace("\r", "\n")
    match = _FRONTMATTER.match(text)
    if not match:
        if text.startswith("---"):
            raise ParseError("frontmatter starts with '---' but is never closed", 1)
        return None, text, 1
    body_line = text[: match.end()].count("\n") + 1
    return match.group(1), text[match.end() :], body_line


# A one-line text value written plainly around ': ' ("directive: Triage a crash from Sentry: confirm
# the release first"): YAML refuses the whole file, which a new user's first rules did twice in 25.
_PROSE_WITH_COLON = re.compile(
    r"""^(directive|summary|title|description)([ \t]*:[ \t]+)([^\s"'|>&*!\[{#%@`][^\n]*?:[ \t][^\n]*)$"""
)


def _load_frontmatter(frontmatter: str) -> tuple[dict, str, tuple[tuple[str, int], ...]]:
    """The frontmatter's keys (`_load_yaml`), the text YAML read, and a warning for each prose value
    holding ': ' that YAML refused and engram read as the one line of text it is, quoted
    (`_PROSE_WITH_COLON`); other tools still need it quoted. The file's own error stands when that
    does not make it YAML."""
    try:
        return _load_yaml(frontmatter), frontmatter, ()
    except ParseError as refused:
        lines = frontmatter.splitlines()
        prose = [(number, match) for number, line in enumerate(lines) if (match := _PROSE_WITH_COLON.match(line))]
        if not prose:
            raise
        for number, match in prose:
            key, colon, value = match.groups()
            lines[number] = key + colon + json.dumps(value.rstrip(), ensure_ascii=False)
        read = "\n".join(lines)
        try:
            data = _load_yaml(read)
        except ParseError:
            raise refused from None
    said = "holds ': ', which YAML refuses unquoted: read as one line of text; quote it for other tools"
    return data, read, tuple((f"`{match.group(1)}` {said}", number + 2) for number, match in prose)


def _load_yaml(frontmatter: str) -> dict:
    import yaml  # loaded with the first file to parse: a no-op `engram index` never needs it

    if len(frontmatter) > MAX_FRONTMATTER_CHARS:
        raise ParseError(f"frontmatter is longer than {MAX_FRONTMATTER_CHARS} characters", 2)
    try:
        data = yaml.load(frontmatter, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))
    except yaml.YAMLError as exc:
        # where what YAML could not close began (`tags: [a, b` on line 3, found out on line 4), else
        # where it found the problem
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        raise ParseError(f"invalid frontmatter: {_yaml_problem(exc, frontmatter)}", line) from None
    except RecursionError:
        raise ParseError(f"frontmatter is nested more than {MAX_DEPTH} levels deep", 2) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParseError("frontmatter is not a mapping of keys to values", 2)
    _check_bounds(data, len(frontmatter))
    return data


def _yaml_problem(exc: Exception, frontmatter: str) -> str:
    """What YAML found wrong, without echoing the file's text (its quoted parts, but YAML's own
    punctuation), and what that means in a memory file where it is known."""
    problem = getattr(exc, "problem", None) or "invalid YAML"
    shown = _QUOTED.sub(lambda m: m.group() if _PUNCTUATION.fullmatch(m.group()) else "...", problem)
    said = f"{getattr(exc, 'context', None) or ''} {problem}"  # "while scanning an alias", "did not find ..."
    hint = next((hint for known, hint in YAML_HINTS.items() if known in said), None)
    if FULL_WIDTH_COLON in frontmatter and not hint:  # `tags：` as an IME types it
        hint = f"a full-width '{FULL_WIDTH_COLON}' is no YAML colon: write ': '"
    return f"{shown} ({hint})" if hint else shown


def _check_bounds(data: dict, written: int) -> None:
    """Refuse YAML aliases (a few lines of them expand to billions of values), deep nesting and
    huge values, walking the loaded data without recursion. Without aliases the values hold no
    more characters than the ``written`` frontmatter; an alias to a long value repeated holds more."""
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(data, 0)]
    characters = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                raise ParseError("frontmatter uses a YAML alias (*name); write the value out", 2)
            seen.add(id(node))
            if depth >= MAX_DEPTH:
                raise ParseError(f"frontmatter is nested more than {MAX_DEPTH} levels deep", 2)
            children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, str):
            if len(node) > MAX_SCALAR_CHARS:
                raise ParseError(f"a frontmatter value is longer than {MAX_SCALAR_CHARS} characters", 2)
            characters += len(node)
            if characters > written:
                raise ParseError("frontmatter uses a YAML alias (*name); write the value out", 2)


def as_text(value: object) -> str:
    """A scalar field as the string the author wrote; lists are joined."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(as_text(v) for v in value)
    if isinstance(value, dict):
        raise ParseError("expected text, found a mapping")
    return str(value).strip()


def as_list(value: object) -> list[str]:
    """A YAML list or a comma string, as a list of non-empty strings."""
    if value is None:
        return []
    if isinstance(value, dict):
        raise ParseError("expected a list, found a mapping")
    items = value if isinstance(value, list) else str(value).split(",")
    out = []
    for item in items:
        text = as_text(item)
        if text and text.lower() not in _NULLS:
            out.append(text)
    return out


def _optional(value: object) -> str | None:
    text = as_text(value)
    return None if text.lower() in _NULLS else text


def _choice(value: object, allowed: tuple[str, ...], default: str) -> str:
    raw = as_text(value).lower()
    if not raw or raw in _NULLS:
        return default
    if raw not in allowed:
        raise ParseError(f"must be one of {', '.join(allowed)}")
    return raw


def parse_date(value: object) -> str | None:
    """A date as written (``2027-06-30``, optionally with a time), or None when empty; memories are
    hidden by comparing these strings with today's date, so anything else is an error."""
    text = _optional(value)
    if text is None:
        return None
    from datetime import date, datetime  # sqlite3 has imported it already

    try:
        if not _ISO_DATE.match(text):
            raise ValueError
        date.fromisoformat(text[:10])
        if len(text) > 10:
            datetime.fromisoformat(text)
    except ValueError:
        raise ParseError("must be a date, YYYY-MM-DD") from None
    return text


def parse_level(value: object) -> int:
    text = as_text(value).lower()
    if not text or text in _NULLS:
        return 0
    if text.isascii() and text.isdigit():
        # the length first: int() of thousands of digits is slow, and refused past 4,300
        if len(text.lstrip("0")) > len(str(MAX_LEVEL)) or int(text) > MAX_LEVEL:
            raise ParseError(f"must be at most {MAX_LEVEL}")
        return int(text)
    if text in LEVELS:
        return LEVELS[text]
    raise ParseError("must be foundation, basic, intermediate, advanced or an integer")


def slugify(stem: str) -> str:
    """The id a file name gives a memory without one: its letters without their marks (`hướng-dẫn`
    is `huong-dan`, composed or not), "" when it has no letter a-z or digit, or holds a letter of
    another script (`データ移行-v2` and `デプロイ-v2` were both `v2`)."""
    if not stem.isascii():
        stem = _without_marks(stem)
        if any(char.isalpha() and not char.isascii() for char in stem):
            return ""
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")


def _without_marks(text: str) -> str:
    import unicodedata  # only for a file name that is not ASCII

    decomposed = unicodedata.normalize("NFKD", text.replace("đ", "d").replace("Đ", "D"))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def strip_hidden_sections(body: str) -> tuple[str, str]:
    """The body without ``## Context``, ``## Example`` and ``## Origin`` (until the next heading of
    level <= 2), written as ATX (``## Context``, indented up to 3 spaces) or setext (``Context`` over
    ``---``), and the lines dropped (agents never see them, so only they need the secret check)."""
    if not _may_hide_sections(body):
        return _joined_lines(body).strip(), ""
    lines = body.splitlines()
    shown: list[str] = []
    hidden: list[str] = []
    hiding = False
    in_fence = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _heading(lines, index)
        if heading and heading[0] <= 2:
            hiding = heading[0] == 2 and heading[1].lower() in HIDDEN_SECTIONS
        (hidden if hiding else shown).append(line)
    return "\n".join(shown).strip(), "\n".join(hidden)


def _may_hide_sections(body: str) -> bool:
    """`_HIDDEN_HEADING_HINT` found in the body. Searched on the lowered text, where it can be:
    a tenth of the time of the case-insensitive search (which tries its words at every letter)."""
    if not body.isascii() and any(twin in body for twin in _ASCII_CASE_TWINS):
        return _HIDDEN_HEADING_HINT.search(body) is not None
    lowered = body.lower()
    if _ATX_HINT_LOWER.search(lowered):
        return True
    return any(_SETEXT_HINT_LOWER.match(lowered, start) for start in occurrences(lowered, _SETEXT_HINT_WORDS))


def _heading(lines: list[str], index: int) -> tuple[int, str] | None:
    """(level, text) when a heading starts at this line; a setext underline belongs to the line above."""
    line = lines[index]
    atx = ATX_HEADING.match(line)
    if atx:
        return len(atx.group(1)), atx.group(2).strip()
    opens_block = index == 0 or not lines[index - 1].strip()  # one-line paragraphs only
    if opens_block and index + 1 < len(lines) and _SETEXT_TEXT.match(line):
        underline = _SETEXT_UNDERLINE.match(lines[index + 1])
        if underline:
            return (1 if underline.group(1)[0] == "=" else 2), line.strip()
    return None


def _title(body: str) -> str:
    """The first level-1 heading."""
    heading = _TITLE.search(_joined_lines(body))
    return heading.group(1).strip() if heading else ""


def _joined_lines(text: str) -> str:
    r"""``"\n".join(text.splitlines())``, without splitting when "\n" is the only line break."""
    if any(line_break in text for line_break in _OTHER_LINE_BREAKS):  # a few memchr calls: far cheaper than a regex
        return "\n".join(text.splitlines())
    return text.removesuffix("\n")


class _Fields:
    """Reads frontmatter fields, collecting every invalid one with the line of its key instead of
    stopping at the first, so one `engram index` run names all a file's problems."""

    def __init__(self, data: dict, frontmatter: str) -> None:
        self.data = data
        self.keys = _top_level_keys(frontmatter)  # (line, the key as written), each time a key is written
        self.written: dict[str, tuple[int, str]] = {}  # lowered key -> its first (line, the key as written)
        for line, key in self.keys:
            self.written.setdefault(key.lower(), (line, key))
        self.lines = {key: line for key, (line, _) in self.written.items()}
        self.errors: list[ParseError] = []

    def read(self, keys: str, convert, default=None):
        """``convert`` applied to the first of ``keys`` (space-separated aliases) that is set."""
        key = next((k for k in keys.split() if k in self.data), keys.split()[0])
        try:
            return convert(self.data.get(key))
        except ParseError as exc:
            self.errors.append(ParseError(f"{key}: {exc.reason}", self.lines.get(key)))
            return default


def _top_level_keys(frontmatter: str) -> list[tuple[int, str]]:
    """Each top-level key with its file line (the frontmatter starts on line 2), as written
    (`alwaysApply`)."""
    keys = []
    for number, line in enumerate(frontmatter.splitlines(), start=2):
        key = _TOP_LEVEL_KEY.match(line)
        if key:
            keys.append((number, key.group(1).strip()))
    return keys


def parse_memory(text: str, rel_path: str) -> Memory:
    """Parse memory text found at ``rel_path`` (relative to its root, e.g. ``rules/x.md``)."""
    frontmatter, body, body_line = split_frontmatter(text)
    _no_conflict(body, body_line)
    data, frontmatter, read_as_text = _load_frontmatter(frontmatter) if frontmatter is not None else ({}, None, ())
    data = {str(k).strip().lower(): v for k, v in data.items()}
    fields = _Fields(data, frontmatter or "")
    folder = rel_path.split("/", 1)[0]
    stem = rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    memory_type = fields.read("type", lambda v: _memory_type(v, folder), "knowledge")
    visible, hidden = strip_hidden_sections(body)
    applies_to = fields.read("applies_to", _globs, [])
    directive = fields.read("directive", _one_line, "")
    memory = Memory(
        id=fields.read("id", lambda v: _memory_id(v, stem), "memory"),
        type=memory_type,
        title=_title(body),
        body=visible,
        tags=[t.lower() for t in fields.read("tags", as_list, [])],
        directive=directive,
        summary=fields.read("summary", _one_line, ""),
        triggers=fields.read("triggers", as_list, []),
        applies_to=applies_to,
        depends_on=[d.lower() for d in fields.read("depends_on", as_list, [])],
        level=fields.read("level dependency_depth depth", parse_level, 0),
        confidence=fields.read("confidence", lambda v: _choice(v, CONFIDENCES, "medium"), "medium"),
        authority=fields.read(
            "authority", lambda v: _choice(v, AUTHORITIES, "reference" if memory_type == "knowledge" else "instruction")
        ),
        lifecycle=fields.read("lifecycle", lambda v: _choice(v, LIFECYCLES, "active"), "active"),
        valid_until=fields.read("valid_until", parse_date),
        roles=[r.lower() for r in fields.read("role roles", as_list, [])],
        updated=fields.read("updated", parse_date),
        warnings=_hidden_only(body, visible, directive, body_line)
        + _unread_keys(fields)
        + _repeated_keys(fields)
        + _globs_cut(applies_to, fields.written.get("applies_to", (None, ""))[0])
        + _cut_by_comments(frontmatter or "")
        + _wide_separators(fields)
        + read_as_text,
        unseen=(frontmatter or "") + "\n" + hidden,
    )
    if fields.errors:  # with the warnings: every problem of the file at once (`tgas` beside a bad `level`)
        said = fields.errors + [ParseError(reason, line) for reason, line in memory.warnings]
        raise FieldErrors(sorted(said, key=lambda error: error.line or 0))
    return memory


def _no_conflict(body: str, body_line: int) -> None:
    conflict = _CONFLICT.search(body) if "<<<<<<<" in body else None
    if conflict:
        line = body_line + body.count("\n", 0, conflict.start())
        raise ParseError("unresolved merge conflict (<<<<<<< ... >>>>>>>); keep one side and remove the markers", line)


def _memory_id(value: object, stem: str) -> str:
    memory_id = as_text(value).lower() or slugify(stem)
    if not memory_id:  # 決済.md: every such file would be `memory`, the second a duplicate
        raise ParseError("missing, and the file name gives none (letters a-z and digits only): add one")
    if not ID_PATTERN.match(memory_id) or len(memory_id) > MAX_ID_CHARS:
        raise ParseError(f"must match [a-z0-9][a-z0-9._-]* and be at most {MAX_ID_CHARS} characters")
    return memory_id


def _memory_type(value: object, folder: str) -> str:
    raw = as_text(value).lower()
    memory_type = TYPE_ALIASES.get(raw, raw) or FOLDER_TYPES.get(folder, "knowledge")
    if memory_type not in TYPES:
        raise ParseError("must be rule, skill or knowledge")
    return memory_type


def _one_line(value: object) -> str:
    return " ".join(as_text(value).split())


def _hidden_only(body: str, visible: str, directive: str, body_line: int) -> tuple[tuple[str, int | None], ...]:
    """A warning when agents would get nothing but a title: no directive, and all the text sits
    in sections they never see (`## Context`, `## Example`, `## Origin`), or there is none."""
    if directive or _has_text(visible):
        return ()
    if not _has_text(body):
        return ((NO_TEXT, body_line),)
    lines = body.splitlines()
    hidden = (i for i in range(len(lines)) if (heading := _heading(lines, i)) and heading[1].lower() in HIDDEN_SECTIONS)
    return ((HIDDEN_ONLY, body_line + next(hidden, 0)),)


def _says_nothing(value: object) -> bool:
    return value in (None, [], {}) or (isinstance(value, str) and value.strip().lower() in _NULLS)


def _unread_keys(fields: _Fields) -> tuple[tuple[str, int | None], ...]:
    """A warning for each key engram does not read that looks like one it does (`tgas`,
    `applies-to`, `directiv`) or says what one of its keys says in another tool (`globs`):
    tolerated, so without the warning the memory silently loses its tags or globs."""
    warnings = []
    for key, value in fields.data.items():
        if key in READ_KEYS or _says_nothing(value):
            continue  # Cursor writes `globs:` and `description:` with no value
        always = key == ALWAYS_APPLY and as_text(value).lower() == "true"
        meant = "tags: [always]" if always else OTHER_TOOLS_KEYS.get(key) or near_miss(key, READ_KEYS)
        line, written = fields.written.get(key, (None, key))
        if meant:
            warnings.append((f"`{gate.name(written)}` is not a key engram reads: did you mean `{meant}`?", line))
    return tuple(warnings)


# A one-line text value written plainly, then ` #`: YAML drops the rest as a comment, so "post in
# #incidents first" leaves "post in".
_COMMENTED_VALUE = re.compile(
    r"""^(directive|summary|title|description)[ \t]*:[ \t]+([^\s"'|>&*!\[{#][^#\n]*?)[ \t]+#"""
)


# Patterns a memory's `applies_to` may expand to in all (Claude Code's budget for one rule's `paths`
# is 1,000): 300 globs of eight `{a,b}` groups each made every file event and every rule-file
# rewrite take seconds, past a host's hook timeout (a red-team audit).
MAX_MEMORY_PATTERNS = 1000


def _globs(value: object) -> list[str]:
    """`applies_to` as a list of globs that expand to at most MAX_MEMORY_PATTERNS patterns in all."""
    from .globs import expand_braces

    globs = as_list(value)
    patterns = 0
    for glob in globs:
        patterns += len(expand_braces(glob, MAX_MEMORY_PATTERNS + 1)) if "{" in glob else 1
        if patterns > MAX_MEMORY_PATTERNS:
            raise ParseError(f"expands to more than {MAX_MEMORY_PATTERNS} patterns in all; narrow it")
    return globs


def _globs_cut(applies_to: list[str], line: int | None) -> tuple[tuple[str, int | None], ...]:
    """A warning for each `applies_to` glob not used as written: one holding a line break, a tab or a
    control character (left out of the hosts' rule files, where it would start a key of its own),
    one whose `{a,b}` groups expand past MAX_EXPANSIONS patterns (the rest are not matched), one
    holding a comma outside `{}` (left out of the hosts' rule files, which split globs at commas)."""
    from .gate import line as one_line  # what the host rule files keep of a glob (`native_rules.host_globs`)
    from .globs import MAX_EXPANSIONS, expand_braces

    warnings = []
    for glob in applies_to:
        if one_line(glob) != glob:
            warnings.append(
                (
                    "an `applies_to` glob holding a line break, a tab or a control character is left out of the hosts' rule files",
                    line,
                )
            )
        elif "{" in glob and len(expand_braces(glob, MAX_EXPANSIONS + 1)) > MAX_EXPANSIONS:
            warnings.append(
                (f"an `applies_to` glob expands to more than {MAX_EXPANSIONS} patterns; the rest are not matched", line)
            )
        elif glob.startswith("!"):
            warnings.append(
                (
                    "an `applies_to` glob starting with '!' excludes what it matches from engram's hooks, but is left"
                    " out of the hosts' rule files (they have no exclusion): Claude Code and Cursor load the rule there",
                    line,
                )
            )
        elif any("," in expanded for expanded in expand_braces(glob)):
            warnings.append(
                (
                    "an `applies_to` glob holding ',' is left out of the hosts' rule files (Cursor reads two globs"
                    " there, `lib/**, **/*` every file): write each glob as an entry of its own",
                    line,
                )
            )
    return tuple(warnings)


def _repeated_keys(fields: _Fields) -> tuple[tuple[str, int], ...]:
    """A warning for each top-level key written again (YAML reads only the last), at its later line."""
    return tuple(
        (f"`{gate.name(key)}` is given again (line {first} too): YAML reads this one only", line)
        for line, key in fields.keys
        if (first := fields.written[key.lower()][0]) != line
    )


def _wide_separators(fields: _Fields) -> tuple[tuple[str, int], ...]:
    """A warning for each list whose item holds a CJK comma: YAML separates items at ',' only, so
    `tags: [決済、請求]` is one tag."""
    return tuple(
        (f"`{key}` holds an item with '{mark}' in it: YAML separates items at ',' only", fields.lines[key])
        for key in ("tags", "triggers", "applies_to", "depends_on", "roles")
        if key in fields.lines
        if (mark := next((m for item in _items(fields.data.get(key)) for m in WIDE_SEPARATORS if m in item), None))
    )


def _items(value: object) -> list[str]:
    """A list field's items as written (a string of comma-separated ones is one item here)."""
    if isinstance(value, list):
        return [str(item) for item in value]
    return [value] if isinstance(value, str) else []


def _cut_by_comments(frontmatter: str) -> tuple[tuple[str, int], ...]:
    """A warning for each prose value the YAML comment rule cut short, with its line."""
    warnings = []
    for number, line in enumerate(frontmatter.splitlines(), start=2):
        cut = _COMMENTED_VALUE.match(line)
        if cut:
            warnings.append(
                (f"`{cut.group(1)}` stops before ' #': YAML reads the rest as a comment; quote the whole value", number)
            )
    return tuple(warnings)


def _has_text(markdown: str) -> bool:
    """Any line that is neither blank nor a heading (nor a setext underline)."""
    lines = markdown.splitlines()
    return any(
        line.strip() and not _heading(lines, i) and not _SETEXT_UNDERLINE.match(line) for i, line in enumerate(lines)
    )
