"""engram.globs: the gitignore-style `applies_to` globs file events match (stdlib, in-process)."""

from __future__ import annotations

import pytest

from engram.globs import MAX_TEXT_PATHS, applying, expand_braces, holds_a_path, literal_length, matches, paths_in
from engram.native_rules import host_globs


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("src/release/**", "src/release/a/b.py", True),
        ("src/release/**", "src/release", False),
        ("src/release/**", "src/releases/x.py", False),
        ("pyproject.toml", "pyproject.toml", True),
        ("pyproject.toml", "sub/pyproject.toml", True),  # no slash: any depth
        ("/pyproject.toml", "sub/pyproject.toml", False),  # leading slash: anchored
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),  # inner slash: anchored, * stays in one segment
        ("docs/", "docs/a/b.md", True),  # trailing slash: inside the directory
        ("docs/", "docs", False),
        ("docs", "x/docs/a.md", True),  # a matched directory covers its contents
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/x/yb", False),
        ("**/foo", "foo", True),
        ("**/foo", "x/y/foo", True),
        ("lib/**/*.{ts,tsx}", "lib/a/b.tsx", True),
        ("lib/**/*.{ts,tsx}", "lib/b.ts", True),
        ("lib/**/*.{ts,tsx}", "lib/b.js", False),
        ("src/{a,b{c,d}}/x", "src/bd/x", True),
        ("file?.md", "file1.md", True),
        ("file?.md", "file12.md", False),
        ("[ab].md", "b.md", True),
        ("[!ab].md", "a.md", False),
        ("[!ab].md", "c.md", True),
        ("a{b", "a{b", True),  # an unclosed brace is literal
        ("./src/*.py", "src/x.py", True),
        ("", "x", False),
    ],
)
def test_glob_matcher(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_brace_expansion_and_specificity() -> None:
    assert expand_braces("src/{a,b}/*.{ts,tsx}") == ["src/a/*.ts", "src/a/*.tsx", "src/b/*.ts", "src/b/*.tsx"]
    assert literal_length("lib/core/engine.py") > literal_length("lib/core/*.py") > literal_length("**/*.py")


def test_the_paths_a_text_writes_are_read_from_each_of_their_folders_on() -> None:
    text = "crash in `src/api/users.py`, see /home/me/app/lib/x.ts (not users.py alone)"
    assert paths_in(text) == [
        "src/api/users.py", "api/users.py",
        "home/me/app/lib/x.ts", "me/app/lib/x.ts", "app/lib/x.ts", "lib/x.ts",
    ]  # fmt: skip
    assert paths_in("a ./docs/../guide/intro.md") == ["docs/guide/intro.md", "guide/intro.md"]
    pasted = " ".join(f"pkg{n}/mod.py" for n in range(MAX_TEXT_PATHS + 5))
    assert len(paths_in(pasted)) == MAX_TEXT_PATHS


@pytest.mark.parametrize("patterns, expected", [
    (["src/api/**"], True),
    (["/src/api/"], True),
    (["src/{api,web}/**/*.py"], True),
    (["src/web/**"], False),
    (["**/*.py"], False),  # any project's Python files: no folder named
    (["*.py", "users.py"], False),
    (["**/api/**"], False),
])  # fmt: skip
def test_a_path_is_held_by_a_pattern_naming_its_folder(patterns: list[str], expected: bool) -> None:
    assert holds_a_path(patterns, ["src/api/users.py", "api/users.py"]) is expected


def test_a_glob_starting_with_an_exclamation_mark_excludes_as_in_gitignore() -> None:
    """`!services/billing/legacy/**` was a glob of its own that matched nothing: the legacy files got the
    rule (a monorepo audit)."""
    patterns = ["services/billing/**/*.py", "!services/billing/legacy/**"]
    assert applying(patterns, "services/billing/api/invoice.py") == ["services/billing/**/*.py"]
    assert applying(patterns, "services/billing/legacy/old_invoice.py") == []
    assert applying([*patterns, "**/old_invoice.py"], "services/billing/legacy/old_invoice.py") == ["**/old_invoice.py"]
    assert applying(["!docs/**"], "docs/a.md") == []
    assert host_globs(patterns) == ["services/billing/**/*.py"]  # no host has an exclusion
