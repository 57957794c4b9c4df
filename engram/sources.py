"""Where memories live: finding the roots and walking their memory files (stdlib only)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections import namedtuple
from collections.abc import Iterator

from .errors import EngramError
from .lazyre import LazyPattern
from .paths import TEMP_MARK, is_inside, shown_path
from .printable import decoded

ROOT_DIR = os.path.join(".agents", ".engram")
MEMORY_FOLDERS = ("rules", "skills", "knowledge")
MAX_FILE_BYTES = 1024 * 1024
IGNORE_FILE = ".engramignore"
CONFIG_FILE = "engram.config.json"
INDEX_FILE = "index.db"
STATE_FILE = "state.db"
BUILD_TEMP_PREFIX = (
    f".{INDEX_FILE}{TEMP_MARK}"  # a build's copy of the index (`paths.replacing`), renamed over it when done
)
BUILD_LOCK_FILE = ".index.lock"  # held while a build writes
CORRUPT_SUFFIX = ".corrupt-"  # a damaged index or state file, set aside for a look: index.db.corrupt-<time>
CHECKED_FILE = ".index.checked"  # the index file's stamp when engram last built it (the name is older)
WATCH_SOCKET = "watch.sock"  # where `engram watch` answers whether the index is current
WATCH_STARTED = ".watch.started"  # the pid of the watcher a hook last started (`autowatch`), and when
# What a memory root's .gitignore keeps out of git: the built files, not the memories.
GENERATED_FILES = (
    INDEX_FILE,
    STATE_FILE,
    f"{STATE_FILE}-*",
    f"{BUILD_TEMP_PREFIX}*",
    BUILD_LOCK_FILE,
    f"*.db{CORRUPT_SUFFIX}*",
    CHECKED_FILE,
    WATCH_SOCKET,
    WATCH_STARTED,
)


class Root(namedtuple("Root", "path scope project")):
    """A memory root: the folder holding rules/, skills/ and knowledge/.

    ``path``: the root folder; ``scope``: "workspace" or "global"; ``project``: where
    .engramignore and generated rule files live. Paths are strings (`engram.paths`).
    """

    __slots__ = ()

    @property
    def data(self) -> str:
        """Where engram keeps its own files for this root (index, build lock, state): the root itself, or
        for a global folder this user cannot write (a read-only team share) a folder of the user's own."""
        if self.scope != "global" or os.access(self.path, os.W_OK) or not os.path.isdir(self.path):
            return self.path
        import hashlib

        from .config import user_config_dir

        key = hashlib.sha256(os.path.realpath(self.path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return os.path.join(user_config_dir(), "global-indexes", key)

    @property
    def index_path(self) -> str:
        return os.path.join(self.data, INDEX_FILE)

    @property
    def state_path(self) -> str:
        return os.path.join(self.data, STATE_FILE)

    @property
    def config_path(self) -> str:
        return os.path.join(self.path, CONFIG_FILE)

    @property
    def ignore_path(self) -> str:
        return os.path.join(self.project, IGNORE_FILE)


class SourceFile(namedtuple("SourceFile", "rel fspath size mtime_ns ctime_ns problem", defaults=(None,))):
    """A memory file found by the walk.

    ``rel``: posix path relative to the root, e.g. "rules/x.md"; ``fspath``: its path;
    ``ctime_ns``: the inode change time, which no edit can set back (a `touch` to an old
    mtime, a file replaced by one of the same size and mtime); ``problem``: set when the
    file must be skipped before reading.
    """

    __slots__ = ()


def display_path(root: Root, rel: str) -> str:
    """A source path as the user knows it: relative to the project, or absolute for global roots."""
    path = os.path.join(root.path, rel)
    return shown_path(path, root.project) if root.scope == "workspace" else path


def set_aside(path: str) -> str:
    """Rename a damaged file to ``<path>.corrupt-<time>`` (kept for a look); returns the new path."""
    import time  # only on the rare repair

    target = f"{path}{CORRUPT_SUFFIX}{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    os.replace(path, target)
    with contextlib.suppress(FileNotFoundError):  # a journal left beside it would be rolled into the rebuilt file
        os.replace(path + "-journal", target + "-journal")
    return target


def has_memory_folders(path: str) -> bool:
    return any(os.path.isdir(os.path.join(path, folder)) for folder in MEMORY_FOLDERS)


def find_project(start: str | os.PathLike[str] | None = None) -> str:
    """Nearest ancestor holding .agents/.engram/, else the git top level, else the start."""
    start = os.path.realpath(start or os.getcwd())
    for folder in _self_and_parents(start):
        if os.path.isdir(os.path.join(folder, ROOT_DIR)):
            return folder
    return _git_top(start) or start


def _self_and_parents(folder: str) -> Iterator[str]:
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _git_top(start: str) -> str | None:
    for folder in _self_and_parents(start):
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
    import subprocess  # rarely reached: most projects have .agents/.engram or a .git folder

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    top = out.stdout.strip()
    return os.path.realpath(top) if out.returncode == 0 and top else None


def workspace_root(start: str | os.PathLike[str] | None = None) -> Root:
    project = find_project(start)
    if decoded(project) != project:
        # SQLite, JSON and the terminal take UTF-8 text: each stopped on such a path with an internal error
        raise EngramError(f"the project's path {decoded(project)} is not UTF-8; engram needs a folder whose path is")
    root = os.path.join(project, ROOT_DIR)
    if os.path.lexists(root) and not is_inside(root, os.path.realpath(project)):
        # as a symlinked rules/ folder is: a clone's `.agents -> ../company/.agents` served a sibling
        # project's memories to the agent and wrote index files there (a red-team audit)
        raise EngramError(
            f"{shown_path(root, project)} leads out of the project (a symlink); engram reads no memories there"
        )
    return Root(root, "workspace", project)


GLOBAL_DIR_ENV = "ENGRAM_GLOBAL_DIR"


def global_root(configured: str | None, project: str) -> Root | None:
    """The optional global root: $ENGRAM_GLOBAL_DIR, else ``global_path`` from config, which, like
    `global_index`, is relative to ``project`` when relative: the same folder from any subfolder."""
    named = os.environ.get(GLOBAL_DIR_ENV)
    if named:
        path = os.path.realpath(os.path.expanduser(named))
    elif configured:
        path = configured_global_path(configured, project)
    else:
        return None
    return Root(path, "global", path)


def configured_global_path(configured: str, project: str) -> str:
    """The folder ``global_path`` names, relative to ``project`` when relative."""
    return os.path.realpath(os.path.join(project, os.path.expanduser(configured)))


def walk_memory_files(root: Root) -> Iterator[SourceFile]:
    """Yield every ``*.md`` under rules/, skills/ and knowledge/, sorted, streaming."""
    for batch in _memory_entries(root, ordered=True):
        for rel, folder, entry, problem in batch:
            path = folder if entry is None else os.path.join(folder, entry.name)
            yield SourceFile(rel, path, 0, 0, 0, problem) if problem else source_file(rel, path, entry)


# Folders of a root that hold markdown on purpose and are never indexed.
UNINDEXED_FOLDERS = ("archive", "inbox")


def stray_files(root: Root) -> list[str]:
    """Markdown files in the root outside its memory folders (and archive/, inbox/): never indexed,
    which their authors may not know. Root-relative, sorted."""
    skipped = {*MEMORY_FOLDERS, *UNINDEXED_FOLDERS}
    found = []
    for folder, dirs, files in shallow(os.walk(root.path), root.path):
        if folder == root.path:
            dirs[:] = [d for d in dirs if d not in skipped]
        rel = os.path.relpath(folder, root.path).replace(os.sep, "/")
        found += [decoded(name if rel == "." else f"{rel}/{name}") for name in files if name.endswith(".md")]
    return sorted(found)


# Other tools' rule files, which teams copy into the memory folders as they are (Cursor's `.mdc`).
OTHER_FORMATS = (".mdc", ".markdown")


def unindexed_files(root: Root) -> tuple[list[str], list[str]]:
    """Files in the memory folders that are never indexed though they sit where memories do, from one
    walk: another tool's rule files (a memory is a `*.md` file), and a merge tool's copies
    (`x_BASE_1234.md`: a memory that happens to be named so is said, not silently left out).
    Root-relative, sorted."""
    other_format: list[str] = []
    merge_copies: list[str] = []
    for folder in MEMORY_FOLDERS:
        for parent, _dirs, files in shallow(os.walk(os.path.join(root.path, folder)), root.path):
            rel = os.path.relpath(parent, root.path).replace(os.sep, "/")
            for name in files:
                if name.lower().endswith(OTHER_FORMATS):
                    other_format.append(decoded(f"{rel}/{name}"))
                elif MERGE_LEFTOVER.fullmatch(name):
                    merge_copies.append(decoded(f"{rel}/{name}"))
    return sorted(other_format), sorted(merge_copies)


def stat_line(rel: str, size: int, mtime_ns: int, ctime_ns: int) -> str:
    """One memory file's stat, as the freshness digest hashes it."""
    return f"{rel}\0{size}\0{mtime_ns}\0{ctime_ns}"


def stat_lines(root: Root) -> list[str]:
    """`stat_line` of every file `walk_memory_files` yields (a file it cannot stat or must skip
    unread counts as size 0, mtimes 0), in walk order but unsorted: `load` runs this every call."""
    lines = []
    for batch in _memory_entries(root, ordered=False):
        for rel, _folder, entry, problem in batch:
            try:
                st = None if problem or entry is None else entry.stat()
            except OSError:
                st = None
            lines.append(stat_line(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st else stat_line(rel, 0, 0, 0))
    return lines


# (rel, folder, DirEntry, None) for a memory file; (rel, folder, DirEntry or None, problem) for one to skip
# unread, where no DirEntry means the folder itself. A batch's entries are stat'ed while the walk holds
# their folder open (`_walk`); their paths are joined only where needed (a path per file costs 5 ms at 10,000).
Found = tuple[str, str, "os.DirEntry | None", "str | None"]


def _memory_entries(root: Root, ordered: bool) -> Iterator[list[Found]]:
    """The memory files in batches (the run of files between two folders): the walk visits every
    file on every `load`, and a generator step per file and folder level costs more than the stat."""
    base = os.path.realpath(root.path)
    # (device, inode) of every folder walked, and the path it was walked as: links may loop. The
    # root and its memory folders are claimed first, so a link to one (`rules/parent -> ..`) is the
    # loop, and `knowledge/` is not walked as `rules/parent/knowledge/` with rules' type.
    claimed = [(root.path, ""), *((os.path.join(root.path, f), f) for f in MEMORY_FOLDERS)]
    visited = {key: rel for path, rel in claimed if (key := folder_key(path)) is not None}
    for folder in MEMORY_FOLDERS:
        top = os.path.join(root.path, folder)
        if os.path.islink(top) and not is_inside(top, base):  # a clone's `skills -> /usr/share/doc`, `~/notes`
            yield [(folder + "/", top, None, "symlinked folder points outside the memory root")]
        elif os.path.isdir(top):
            yield from _walk(top, folder, base, ordered, visited)


# Folders below a memory folder walked at most this deep: a walk goes one call deeper per folder, and a
# clone's folder nested 490 levels deep (a path git stores) stopped every command (a red-team audit).
MAX_FOLDER_DEPTH = 32


def shallow(walked: Iterator[tuple[str, list[str], list[str]]], top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """An `os.walk` from ``top`` that does not enter folders past MAX_FOLDER_DEPTH levels (nor recurse past them)."""
    for folder, dirs, files in walked:
        if os.path.relpath(folder, top).count(os.sep) >= MAX_FOLDER_DEPTH:
            dirs[:] = []
        yield folder, dirs, files


# Listing a folder by its descriptor makes each entry's stat relative to it (`fstatat`), which
# spares the kernel the whole path: about 30 % of the walk at 10,000 memories.
_BY_DESCRIPTOR = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


def folder_key(path: str) -> tuple[int, int] | None:
    """(device, inode) of a folder; None when ``path`` is no folder (or gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _walk(
    directory: str, rel: str, base: str, ordered: bool, visited: dict[tuple[int, int], str]
) -> Iterator[list[Found]]:
    try:
        handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY) if _BY_DESCRIPTOR else None
    except OSError as exc:
        yield [(rel + "/", directory, None, f"cannot list folder: {exc.strerror or exc}")]
        return
    try:
        yield from _walk_listing(directory, handle, rel, base, ordered, visited)
    finally:
        if handle is not None:
            os.close(handle)  # after the consumer has stat'ed the last batch


def _walk_listing(
    directory: str, handle: int | None, rel: str, base: str, ordered: bool, visited: dict[tuple[int, int], str]
) -> Iterator[list[Found]]:
    try:
        st = os.stat(directory) if handle is None else os.fstat(handle)
        with os.scandir(directory if handle is None else handle) as listing:
            entries = sorted(listing, key=_entry_name) if ordered else list(listing)
    except OSError as exc:
        yield [(rel + "/", directory, None, f"cannot list folder: {exc.strerror or exc}")]
        return
    if visited.setdefault((st.st_dev, st.st_ino), rel) != rel:
        yield [(rel + "/", directory, None, "symlinked folder loops back to a folder already indexed")]
        return
    prefix = rel + "/"
    batch: list[Found] = []
    for entry in entries:
        name = entry.name
        if left_behind(name):
            continue
        if not name.isprintable():
            if name.endswith(".md") or _safely(entry.is_dir):
                batch.append((prefix + decoded(name), directory, entry, _unprintable(name)))
        elif _safely(entry.is_symlink) and not is_inside(os.path.join(directory, name), base):
            if name.endswith(".md"):
                batch.append((prefix + name, directory, entry, "symlink points outside the memory root"))
            elif _safely(entry.is_dir):  # said once, so memories that seem to be there but never load are explained
                batch.append((prefix + name + "/", directory, entry, "symlinked folder points outside the memory root"))
        elif _safely(entry.is_dir) and prefix.count("/") >= MAX_FOLDER_DEPTH:
            batch.append(
                (prefix + name + "/", directory, entry, f"folder nested deeper than {MAX_FOLDER_DEPTH} levels")
            )
        elif _safely(entry.is_dir):
            if batch:
                yield batch
                batch = []
            yield from _walk(os.path.join(directory, name), prefix + name, base, ordered, visited)
        elif name.endswith(".md") and _safely(entry.is_file):
            batch.append((prefix + name, directory, entry, None))
        elif name.endswith(".md"):
            batch.append((prefix + name, directory, entry, "not a regular file (a FIFO, a device or a broken link)"))
    if batch:
        yield batch


# What editors and merge tools leave beside a file: hidden files and folders (Emacs' lock link
# `.#x.md`, `.x.md`), and git mergetool's `x_BASE_1234.md` copies. Indexed, they shipped the old
# text of a rule beside the new one under another id (a migration audit).
MERGE_LEFTOVER = LazyPattern(r".+_(?:BASE|LOCAL|REMOTE|BACKUP)_\d+\.md")


def left_behind(name: str) -> bool:
    return name.startswith(".") or ("_" in name and MERGE_LEFTOVER.fullmatch(name) is not None)


def _unprintable(name: str) -> str:
    return "file name is not UTF-8" if decoded(name) != name else "file name holds control characters"


def _safely(check) -> bool:
    """``entry.is_dir``, ``is_file`` or ``is_symlink``, False where the entry cannot be resolved (a
    symlink loop, an entry of a folder this user may list but not enter: `/proc`'s)."""
    try:
        return check()
    except OSError:
        return False


def _entry_name(entry: os.DirEntry) -> str:
    return entry.name


def source_file(rel: str, path: str, entry: os.DirEntry | None = None) -> SourceFile:
    """A memory file and its stat (taken through the walk's ``entry`` where there is one)."""
    try:
        st = os.stat(path) if entry is None else entry.stat()
    except OSError as exc:
        return SourceFile(rel, path, 0, 0, 0, f"cannot read: {exc.strerror or exc}")
    problem = None
    if st.st_size > MAX_FILE_BYTES:
        problem = f"file is larger than 1 MiB ({st.st_size} bytes)"
    return SourceFile(rel, path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, problem)
