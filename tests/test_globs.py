"""engram.globs: the gitignore-style `applies_to` globs file events match (stdlib, in-process)."""

from __future__ import annotations

import pytest

from engram.globs import expand_braces, literal_length, matches


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
