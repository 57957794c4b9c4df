"""The documents a pointer memory points to, read so that it routes on them.

Teams keep their guidance in documents (`docs/`, an area's `AGENTS.md`, a feature's README) and
cut their rules down to a line that points there: "See [README.md](mdc:web/src/features/rbac/README.md)
for details", "@docs/llm-guides/ui.md", "Read `docs/lsp.md`.". Such a memory holds nothing to
route on but its name; a reader follows the link. A memory whose own body is under POINTER_WORDS
words is routed on the text its links lead to as well (a markdown link, Cursor's `mdc:` link, a
`@path` import as Claude Code reads them in `CLAUDE.md`, a path written bare; the section a link
names, or a document's start): the compiler adds their terms to the memory's body terms
(`compile.prepare`). The documents are never printed, so only the secrets check reads them
there. Only text documents inside the project count: never a file of the memory folders (a
memory of its own), a file outside the project through `..` or a link, a change log, or the
project's own instruction files at its top, which hosts load whole. Stdlib only: the compiler
runs it in its workers, and every freshness check stats what it found (`stat_of`): its patterns
are compiled on first use (`lazyre`).
"""

from __future__ import annotations

import os
import re
from collections import namedtuple

from .lazyre import LazyPattern
from .paths import is_inside, read_head, relative_posix
from .sources import MEMORY_FOLDERS

POINTER_WORDS = 50  # a body shorter than this is a pointer: its own words are too few to route on
MAX_DOCUMENTS = 3  # documents followed per memory
MAX_REFERENCES = 3 * MAX_DOCUMENTS  # looked at per memory: each one leading nowhere is stat'ed by every load
MAX_CHARS = 8_000  # of their text, in all: about what a long rule holds
DOCUMENT_SUFFIXES = (".md", ".mdc", ".mdx", ".markdown", ".txt", ".rst")  # .mdx: a docs site's pages
# Records, not guidance: "add an entry to CHANGELOG.md" points to no subject of its own.
RECORDS = LazyPattern(r"(?i)^(?:change_?log|changes|history|news|releases|licen[cs]e|copying|notice)\b")
# The project's own instruction files at its top, which hosts load whole into every session: a
# rule pointing there ("the Testing section of the root AGENTS.md") would route on all of it.
WHOLE_PROJECT = {"agents.md", "claude.md", "gemini.md", "readme.md", "readme"}
# Left to right: a markdown link, whole (its text is no reference of its own), with its target;
# a `@path` import; a path written bare or in backticks ("Read `docs/lsp.md`", "the root
# AGENTS.md"), with or without `mdc:`. Each is a run of path characters that no word character,
# `@`, `/`, `:` or `.` precedes, so an e-mail address or a URL's inner parts are none; what ends in
# no document suffix (an `@scope/package` import, any other word) is dropped below.
_PATH = r"((?:\.{1,2}/)*[\w-][\w.-]*(?:/[\w.-]+)*)"
# A link's text and target hold no `[`, and its target is of bounded length, read once: a run of
# `[`, or of `[a](` with no `)`, was read again from each one (seconds for 40 KB).
REFERENCE = LazyPattern(
    r"\[[^\[\]\n]*\]\(\s*<?(?:mdc:)?([^)\s>\[]{1,1000}+)[^)\n\[]{0,200}+\)"
    + r"|(?<![\w@/])@"
    + _PATH
    + r"|(?<![\w/@:.-])(?:mdc:)?"
    + _PATH
)
HEADING = LazyPattern(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
MAX_DOCUMENT_BYTES = 1024 * 1024  # read to find the section a link names


class Document(namedtuple("Document", "rel size mtime_ns ctime_ns")):
    """A document a memory points to: ``rel``, posix and relative to the project; its stat, all
    zero when it is not there (so that its creation counts as a change)."""

    __slots__ = ()


class Link(namedtuple("Link", "document section explicit")):
    """A document as a memory links to it: all of it, or the ``section`` its link names (the
    heading's anchor, `#rule-4--business-logic`; "" for the whole document); ``explicit``: written
    as a link or an import, not as a path in a sentence ("the vault path is in docs/vault.md")."""

    __slots__ = ()


def is_pointer(body: str) -> bool:
    return len(body.split(maxsplit=POINTER_WORDS - 1)) < POINTER_WORDS  # splits no more of a long body


def references(body: str) -> list[tuple[str, str, bool]]:
    """The documents a body links to or names, in order, once each, as (path, section anchor or
    "", whether written as a link or an import): relative paths with a document suffix, no URL,
    no change log or licence."""
    out = []
    for match in REFERENCE.finditer(body):
        written, _, anchor = next(filter(None, match.groups())).split("?")[0].partition("#")
        target, anchor = written.rstrip(".,;:"), anchor.rstrip(".,;:").lower()  # a sentence's end
        if "://" in target or target.startswith("/") or not target.lower().endswith(DOCUMENT_SUFFIXES):
            continue
        if RECORDS.match(target.rsplit("/", 1)[-1]):
            continue
        if (target, anchor, explicit := match.group(3) is None) not in out:
            out.append((target, anchor, explicit))
    return out


def pointed_documents(body: str, memory_path: str, project: str, memory_root: str) -> list[Link]:
    """The documents a pointer memory links to (at most MAX_DOCUMENTS links found), with every
    place looked at where none was found; [] for a memory that is no pointer."""
    if not is_pointer(body):
        return []
    top = os.path.realpath(project)
    memory_folders = [os.path.join(os.path.realpath(memory_root), folder) for folder in MEMORY_FOLDERS]
    folder = os.path.dirname(os.path.realpath(memory_path))
    found: list[Link] = []
    missing: list[Link] = []
    for target, section, explicit in references(body)[:MAX_REFERENCES]:
        if len(found) == MAX_DOCUMENTS:
            break
        places = _places(target, folder, top)
        existing = next((place for place in places if os.path.lexists(place)), None)
        if existing is None:  # stat'ed on every freshness check: a document written later counts
            missing += [
                Link(Document(rel, 0, 0, 0), "", explicit) for place in places if (rel := relative_posix(place, top))
            ]
        elif document := _document(existing, top, memory_folders):  # the first place there decides
            found.append(Link(document, section, explicit))
    return list(dict.fromkeys(found + missing))


def documents_of(links: list[Link]) -> list[Document]:
    """The documents of some links, once each, as the index records them."""
    return list(dict.fromkeys(link.document for link in links))


def read_documents(project: str, links: list[Link]) -> str:
    """The text the links lead to, MAX_CHARS at most in all (undecodable bytes replaced): a
    document from its start, or the section a link names (from its heading to the next one of
    its level; all of the document when no heading has that anchor). A document that cannot be
    read now adds nothing."""
    texts, left = [], MAX_CHARS
    for document, anchor, _ in links:
        if not document.size or left <= 0:
            continue
        try:
            data = read_head(os.path.join(project, document.rel), MAX_DOCUMENT_BYTES if anchor else 4 * left)
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        text = (section(text, anchor) if anchor else text)[:left]
        texts.append(text)
        left -= len(text)
    return "\n\n".join(texts)


def section(text: str, anchor: str) -> str:
    """The section of a markdown text whose heading has this anchor (as GitHub makes them:
    lower case, punctuation dropped, spaces as hyphens), up to the next heading of its level or
    higher; the whole text when none has it."""
    for heading in HEADING.finditer(text):
        if _anchor(heading.group(2)) == anchor:
            level = len(heading.group(1))
            ends = (later.start() for later in HEADING.finditer(text, heading.end()) if len(later.group(1)) <= level)
            return text[heading.start() : next(ends, len(text))]
    return text


def _anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def stat_of(project: str, rel: str) -> Document:
    """A document's stat now, as `Document` records it (zeros when it is not there)."""
    try:
        st = os.stat(os.path.join(project, rel))
    except OSError:
        return Document(rel, 0, 0, 0)
    return Document(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _places(target: str, memory_folder: str, project: str) -> list[str]:
    """Where a link may lead: beside the memory file (a relative link), then from the project's
    top (`@docs/x.md`, `mdc:web/README.md`, as Cursor and Claude Code resolve them), then, for a
    link that climbs (`../../docs/x.md`), from the top without its climb: it was written beside the
    rule's first home (`.claude/rules/`, `.github/instructions/`), two folders down as engram's are
    three, and moving the file into engram's folder left it one short."""
    places = [os.path.join(memory_folder, target), os.path.join(project, target)]
    if target.startswith("../"):
        places.append(os.path.join(project, re.sub(r"^(?:\.\./)+", "", target)))
    return list(dict.fromkeys(map(os.path.normpath, places)))


def _document(place: str, top: str, memory_folders: list[str]) -> Document | None:
    """The document at ``place``: a regular file inside the project (symlinks followed, then
    checked), outside the memory folders, whose files are memories of their own, and not one of
    the project's own instruction files at its top (WHOLE_PROJECT)."""
    real = os.path.realpath(place)
    rel = relative_posix(real, top)
    if rel is None or rel.lower() in WHOLE_PROJECT or any(is_inside(real, folder) for folder in memory_folders):
        return None
    return stat_of(top, rel) if os.path.isfile(real) else None
