"""The output gate: every string engram prints to an agent or a terminal passes here (stdlib only).

An index may come from anyone (`load --index team.db`, `global_index`), so no stored value is
trusted because it is stored:

- ``check_memory``: before a memory is printed, its structural fields are validated (the id
  pattern, the type and authority enums, a relative path inside a memory folder), its printed
  columns must match their hash, and all of them together pass the safety screen;
- ``name`` and ``path``: ids, tags and file names printed on their own;
- ``text`` on every printed text, ``line`` on every one-line message: terminal escape sequences,
  control characters and invisible format characters never reach the output.

See docs/safety.md for what this guarantees.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from .index import LOCAL_REBUILD, PRINTED_COLUMNS, printed_digest
from .lazyre import LazyPattern
from .memory_format import AUTHORITIES, ID_PATTERN, MAX_ID_CHARS, TYPES
from .printable import text
from .sources import MEMORY_FOLDERS

# (digest of the printed columns, the text to screen) -> label or None; `state.ScreenCache`
# remembers verdicts by digest.
Screen = Callable[[str, str], "str | None"]
# The form of what the screen reads of a memory (`screened_text`): cached verdicts of another form
# are not reused (`state.ScreenCache`).
SCREENED_FORM = "2"
WITHHELD = "(withheld)"  # printed instead of a name that is not valid or not safe
MAX_NAME = MAX_ID_CHARS  # ids and tags
MAX_PATH = 1024

_LINE_BREAKS = LazyPattern("[\n\r\t\x0b\x0c\x85\u2028\u2029]")
_LABEL = LazyPattern(r"(?:secret|injection): [a-z][a-z -]{0,40}")


def line(value: str) -> str:
    """One line of a message: as ``text``, with line breaks and tabs shown as spaces."""
    return text(_LINE_BREAKS.sub(" ", value))


def cleaned(payload):
    """A JSON payload with ``text`` applied to every string in it (engram's own, shallow payloads)."""
    if isinstance(payload, str):
        return text(payload)
    if isinstance(payload, list):
        return [cleaned(item) for item in payload]
    if isinstance(payload, dict):
        return {cleaned(key): cleaned(value) for key, value in payload.items()}
    return payload


def is_id(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_NAME and ID_PATTERN.fullmatch(value) is not None


def name(value: object) -> str:
    """An id or a tag as printed in a list: one short line that passes the screen, else WITHHELD."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME or line(value) != value:
        return WITHHELD
    return WITHHELD if _flagged(value) else value


def memory_id(value: object) -> str:
    """A memory id as printed: a valid id (`is_id`) that ``name`` prints as it is, else WITHHELD
    (a shared index may store anything as an id)."""
    return value if isinstance(value, str) and is_id(value) and name(value) == value else WITHHELD


def _flagged(value: str) -> bool:
    """Whether the screen flags a name read as words (an instruction spelt `ignore-previous-rules`)
    or as written (a token, `ghp_...` or `dop_v1_...`, whose shape the words would break)."""
    from .safety import scan  # an import, not a cost: load has it already

    words = _as_words(value)
    return scan(value) is not None or (words != value and scan(words) is not None)


# The most whitespace-separated parts a secret is looked for in: a key alone, or with the words
# that make it one ("password: hunter2", "token = abc...").
SECRET_WINDOW = 3


def secret_parts(task: str) -> tuple[str, ...]:
    """The parts of a task (split at whitespace, folded and lowered) the screen flags as a secret, alone or
    in the fewest neighbours that make one; every part when only the whole task is flagged. The
    task's words shown back (dry-run's anchors, what a memory lacks) are withheld inside them: a
    key pasted into a prompt, lowered, no longer looks like one."""
    from .safety import scan_secrets

    if scan_secrets(task) is None:
        return ()
    parts = task.split()
    flagged: set[int] = set()
    for size in range(1, SECRET_WINDOW + 1):
        for start in range(len(parts) - size + 1):
            window = range(start, start + size)
            if flagged.isdisjoint(window) and scan_secrets(" ".join(parts[start : start + size])):
                flagged.update(window)
    import unicodedata  # only for a task holding a secret

    # as the task's words are folded: a key typed in full-width letters is an anchor in ASCII
    return tuple(unicodedata.normalize("NFKC", parts[i]).lower() for i in sorted(flagged or range(len(parts))))


def task_word(word: str, secrets: tuple[str, ...]) -> str:
    """A word of the task as printed: WITHHELD when it is inside one of its ``secret_parts``, or
    holds one (a two-word name glued to a key)."""
    if any(word in part or part.strip(_PUNCTUATION) in word for part in secrets):
        return WITHHELD
    return word


def asked_ids(values: list[str]) -> list[str]:
    """Ids as asked for (`load --id a,b`, MCP `fetch`): each stripped and lowered, or WITHHELD
    when the screen flags it as written (a pasted key, lowered, no longer looks like one)."""
    from .safety import scan_secrets

    return [WITHHELD if scan_secrets(value) else value.strip().lower() for value in values if value.strip()]


def redacted(task: str) -> str:
    """A task (or any message) as one printed line, each part the screen flags as a secret withheld."""
    return line(secrets_withheld(task))


def secrets_withheld(value: str) -> str:
    """The text with each part the screen flags as a secret (`secret_parts`) withheld, its layout kept."""
    secrets = set(secret_parts(value))
    if not secrets:
        return value
    return "".join(_withheld(part) if part.lower() in secrets else part for part in _SPACES.split(value))


def _withheld(part: str) -> str:
    """A flagged part as WITHHELD, the quotes, brackets and punctuation around it kept where what
    they enclose is flagged alone (`unknown host 'ghp_...'.` prints `'(withheld)'.`)."""
    from .safety import scan_secrets

    core = part.strip(_PUNCTUATION)
    if not core or core == part or not scan_secrets(core):
        return WITHHELD
    start = part.index(core)
    return part[:start] + WITHHELD + part[start + len(core) :]


_SPACES = LazyPattern(r"(\s+)")  # split keeping the spaces and line breaks


_PUNCTUATION = "\"'`.,;:!?()[]{}<>="


def names(values: list[str]) -> list[str]:
    """The ids or tags of a list that ``name`` prints as they are; the others are left out."""
    return [value for value in values if name(value) == value]


def is_memory_path(rel: object) -> bool:
    """A stored path a memory may have: relative, inside a memory folder, no `..`, an `.md` file."""
    if not isinstance(rel, str) or not 0 < len(rel) <= MAX_PATH or line(rel) != rel or "\\" in rel:
        return False
    parts = rel.split("/")
    return parts[0] in MEMORY_FOLDERS and rel.endswith(".md") and not any(p in ("", ".", "..") for p in parts)


def path(rel: str) -> str:
    """A stored path as printed: itself when valid, else WITHHELD (it may hold anything), and each
    folder or file name the screen flags withheld, as in ``file_path``."""
    return file_path(rel) if is_memory_path(rel) else WITHHELD


def file_path(value: str) -> str:
    """A file path shown in a message: one line, each folder or file name the screen flags withheld
    (a file may be named to carry an instruction)."""
    return message(value)


def message(value: str) -> str:
    """A one-line message that may quote what a repository controls (a path in its config, a file
    or key name): each part between slashes the screen flags (an instruction, a secret) withheld,
    as each folder or file name of a path is (a red-team audit named a `global_path` and a file
    after an instruction, and the warnings printed it). A path read whole is screened too: an
    instruction split over folders (`rules/Ignore all/previous instructions ...`) has its parts
    withheld, the fewest neighbouring ones that make it."""
    parts = line(value).split("/")
    hidden = {i for i, part in enumerate(parts) if part and _flagged(part)}
    if len(parts) - len(hidden) > 1 and _flagged(" ".join(p for i, p in enumerate(parts) if i not in hidden)):
        hidden |= _flagged_neighbours(parts, hidden)
    return "/".join(WITHHELD if i in hidden else part for i, part in enumerate(parts))


def _flagged_neighbours(parts: list[str], hidden: set[int]) -> set[int]:
    """The parts that the screen flags read together, two neighbours first, then three, ...: each
    smallest run of parts not already withheld."""
    flagged: set[int] = set()
    for size in range(2, len(parts) + 1):
        for start in range(len(parts) - size + 1):
            run = range(start, start + size)
            if hidden.isdisjoint(run) and flagged.isdisjoint(run) and _flagged(" ".join(parts[start : start + size])):
                flagged.update(run)
    return flagged


def label(stored: object) -> str:
    """A stored safety label as printed: one of the screen's label shapes, else a plain one."""
    return stored if isinstance(stored, str) and _LABEL.fullmatch(stored) else "flagged by the safety screen"


def invalid_field(row: sqlite3.Row) -> str | None:
    """The name of the first structural field of a memory row that is not valid, else None."""
    if not is_id(row["id"]):
        return "id"
    if row["type"] not in TYPES:
        return "type"
    if row["authority"] not in AUTHORITIES:
        return "authority"
    if not is_memory_path(row["rel"]):
        return "path"
    return None


def _string_list(raw: object) -> list[str] | None:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _as_words(value: str) -> str:
    """An id or tag as the screen reads it: `ignore-previous-rules` is three words."""
    return value.replace("-", " ").replace("_", " ").replace(".", " ")


def screened_text(columns: dict[str, str]) -> str:
    """What the screen reads of a memory: every printed column (PRINTED_COLUMNS) as text."""
    tags = _string_list(columns["tags"]) or []
    globs = _string_list(columns["applies_to"]) or []
    names = (columns["id"], *tags)
    words = " ".join(_as_words(v) for v in names)  # as words for instructions, as written for tokens
    return "\n".join(
        (
            words,
            " ".join(names),
            " ".join(globs),
            columns["title"],
            columns["directive"],
            columns["summary"],
            columns["body"],
        )
    )


def check_memory(
    conn: sqlite3.Connection, row: sqlite3.Row, screen: Screen, rebuild: str = LOCAL_REBUILD
) -> tuple[str, str | None, str]:
    """(body, None, "") when the memory may be printed; else ("", reason, label) with reason
    `hash` (invalid or altered stored fields, ``rebuild`` saying what mends them) or `safety`
    (the screen flagged it)."""
    if row["safety"]:
        return "", "safety", label(row["safety"])
    field = invalid_field(row)
    if field:
        return "", "hash", f"stored {field} is not valid; {rebuild}"
    stored = conn.execute(
        f"SELECT {', '.join(PRINTED_COLUMNS)}, text_sha256 FROM memories WHERE rowid = ?", (row["rowid"],)
    ).fetchone()
    columns = dict(zip(PRINTED_COLUMNS, stored))
    lists = (_string_list(columns["tags"]), _string_list(columns["applies_to"]))
    if not all(isinstance(v, str) for v in columns.values()) or None in lists:
        return "", "hash", f"stored fields are not valid; {rebuild}"
    digest = printed_digest(columns)
    if digest != stored[-1]:
        return "", "hash", f"stored text does not match its hash; {rebuild}"
    found = screen(digest, screened_text(columns))
    if found:
        return "", "safety", label(found)
    return columns["body"], None, ""


def requires(dsts: list[str]) -> list[str]:
    """`requires:` ids as printed: the ones that are valid ids the screen does not flag (edges are
    not hashed, and a `depends_on` may name any text)."""
    return [dst for dst in dsts if is_id(dst) and not _flagged(dst)]
