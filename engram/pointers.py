"""The documents a pointer memory points to, read so that it routes on them.

Teams keep their guidance in documents (`docs/`, an area's `AGENTS.md`, a feature's README) and
cut their rules down to a line that points there: "See [README.md](mdc:web/src/features/rbac/README.md)
for details", "@docs/llm-guides/ui.md". Such a memory holds nothing to route on but its name; a
reader follows the link. A memory whose own body is under POINTER_WORDS words is routed on the
text of the documents its body links to as well (a markdown link, Cursor's `mdc:` link, a `@path`
import as Claude Code reads them in `CLAUDE.md`): the compiler adds their terms to the memory's
body terms (`compile.prepare`). The documents are never printed, so they need no screen; only
documents inside the project count (never a file of the memory folders, which is a memory of its
own, never a file outside the project through `..` or a link), and only text documents, not code. Stdlib only: the compiler runs it in its workers.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple

from .paths import is_inside, read_head, relative_posix
from .sources import MEMORY_FOLDERS

POINTER_WORDS = 50  # a body shorter than this is a pointer: its own words are too few to route on
MAX_DOCUMENTS = 3  # documents followed per memory
MAX_CHARS = 8_000  # of their text, in all: about what a long rule holds
DOCUMENT_SUFFIXES = (".md", ".mdc", ".markdown", ".txt", ".rst")
# A markdown link's target (with or without `mdc:`), or a `@path` import: a word of path characters
# after an `@` that no word character, `@` or `/` precedes (an e-mail address, `@scope/package`
# imports of code end in no document suffix and are dropped below).
REFERENCE = re.compile(r"\]\(\s*<?(?:mdc:)?([^)\s>]+)|(?<![\w@/])@((?:\.{1,2}/)*[\w.-]+(?:/[\w.-]+)*)")


class Document(namedtuple("Document", "rel size mtime_ns ctime_ns")):
    """A document a memory points to: ``rel``, posix and relative to the project; its stat, all
    zero when it is not there (so that its creation counts as a change)."""

    __slots__ = ()


def is_pointer(body: str) -> bool:
    return len(body.split(maxsplit=POINTER_WORDS - 1)) < POINTER_WORDS  # splits no more of a long body


def references(body: str) -> list[str]:
    """The document paths a body links to, in order, once each: relative paths with a document
    suffix, no URL, no anchor or query."""
    out = []
    for match in REFERENCE.finditer(body):
        target = (match.group(1) or match.group(2)).split("#")[0].split("?")[0].rstrip(".,;:")  # a sentence's end
        if "://" in target or target.startswith("/") or not target.lower().endswith(DOCUMENT_SUFFIXES):
            continue
        if target not in out:
            out.append(target)
    return out


def pointed_documents(body: str, memory_path: str, project: str, memory_root: str) -> list[Document]:
    """The documents a pointer memory links to (at most MAX_DOCUMENTS found), with every place
    looked at where none was found; [] for a memory that is no pointer."""
    if not is_pointer(body):
        return []
    top = os.path.realpath(project)
    memory_folders = [os.path.join(os.path.realpath(memory_root), folder) for folder in MEMORY_FOLDERS]
    folder = os.path.dirname(os.path.realpath(memory_path))
    found: list[Document] = []
    missing: list[Document] = []
    for target in references(body):
        if len(found) == MAX_DOCUMENTS:
            break
        places = _places(target, folder, top)
        existing = next((place for place in places if os.path.lexists(place)), None)
        if existing is None:  # stat'ed on every freshness check: a document written later counts
            missing += [Document(rel, 0, 0, 0) for place in places if (rel := relative_posix(place, top))]
        elif document := _document(existing, top, memory_folders):  # the first place there decides
            found.append(document)
    return list(dict.fromkeys(found + missing))


def read_documents(project: str, documents: list[Document]) -> str:
    """The text of the documents found, MAX_CHARS at most in all (undecodable bytes replaced); a
    document that cannot be read now adds nothing."""
    texts, left = [], MAX_CHARS
    for document in documents:
        if not document.size or left <= 0:
            continue
        try:
            text = read_head(os.path.join(project, document.rel), 4 * left).decode("utf-8", "replace")[:left]
        except OSError:
            continue
        texts.append(text)
        left -= len(text)
    return "\n\n".join(texts)


def stat_of(project: str, rel: str) -> Document:
    """A document's stat now, as `Document` records it (zeros when it is not there)."""
    try:
        st = os.stat(os.path.join(project, rel))
    except OSError:
        return Document(rel, 0, 0, 0)
    return Document(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _places(target: str, memory_folder: str, project: str) -> list[str]:
    """Where a link may lead: beside the memory file (a relative link), then from the project's
    top (`@docs/x.md`, `mdc:web/README.md`, as Cursor and Claude Code resolve them)."""
    beside = os.path.normpath(os.path.join(memory_folder, target))
    from_top = os.path.normpath(os.path.join(project, target))
    return [beside] if beside == from_top else [beside, from_top]


def _document(place: str, top: str, memory_folders: list[str]) -> Document | None:
    """The document at ``place``: a regular file inside the project (symlinks followed, then
    checked) and outside the memory folders, whose files are memories of their own."""
    real = os.path.realpath(place)
    rel = relative_posix(real, top)
    if rel is None or any(is_inside(real, folder) for folder in memory_folders) or not os.path.isfile(real):
        return None
    return stat_of(top, rel)
