"""The roots and merged config for a working directory (stdlib only)."""

from __future__ import annotations

import os

from .config import Config, load_config
from .sources import GLOBAL_DIR_ENV, Root, configured_global_path, global_root, workspace_root


class Workspace:
    def __init__(self, root: Root, global_root: Root | None, config: Config) -> None:
        self.root = root
        self.global_root = global_root
        self.config = config

    @property
    def roots(self) -> list[Root]:
        """Workspace first: its copy of an id wins over the global one."""
        return [self.root, *([self.global_root] if self.global_root else [])]

    @property
    def global_index_path(self) -> str | None:
        """The prebuilt index named by `global_index`; a relative path is relative to the project."""
        named = self.config.get("global_index")
        return os.path.join(self.root.project, os.path.expanduser(named)) if named else None

    def global_notes(self) -> list[str]:
        """Why the global folder configured is not used, one line each: said by `load`, `index` and
        `check`, as a global index that cannot be used is, rather than loading less in silence.
        There is one global layer, and `global_index` is it when both are set (docs/decisions.md)."""
        if self.global_root is None:
            return []
        folder = self.global_root.path
        named_by = f"${GLOBAL_DIR_ENV}" if os.environ.get(GLOBAL_DIR_ENV) else "global_path"
        if self.global_index_path:
            return [
                f"global folder not used: global_index and {named_by} are both set; "
                f"the global layer is the index {self.global_index_path}, not the folder {folder}"
            ]
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.lexists(folder) else "does not exist"
            return [f"global folder not used: {folder} ({named_by}) {what}"]
        return self._overridden(folder)

    def _overridden(self, folder: str) -> list[str]:
        """$ENGRAM_GLOBAL_DIR wins over the committed `global_path`: said, as a shell variable set
        for one project changes the company layer of every other one (a rollout audit's did)."""
        configured = self.config.get("global_path")
        if not os.environ.get(GLOBAL_DIR_ENV) or not configured:
            return []
        committed = configured_global_path(configured, self.root.project)
        if committed == folder:
            return []
        return [f"global_path not used: ${GLOBAL_DIR_ENV} names the global folder {folder}, over {committed}"]


def open_workspace(start: str | os.PathLike[str] | None = None) -> Workspace:
    root = workspace_root(start)
    first = load_config(root.config_path)
    glob = global_root(first.get("global_path"), root.project)
    if glob is None or glob.path == root.path:
        return Workspace(root, None, first)
    return Workspace(root, glob, load_config(glob.config_path, root.config_path))
