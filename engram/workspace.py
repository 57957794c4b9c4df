"""The roots and merged config for a working directory (stdlib only)."""

from __future__ import annotations

import os

from .config import Config, load_config
from .sources import Root, global_root, workspace_root


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


def open_workspace(start: str | os.PathLike[str] | None = None) -> Workspace:
    root = workspace_root(start)
    first = load_config(root.config_path)
    glob = global_root(first.get("global_path"))
    if glob is None or glob.path == root.path:
        return Workspace(root, None, first)
    return Workspace(root, glob, load_config(glob.config_path, root.config_path))
