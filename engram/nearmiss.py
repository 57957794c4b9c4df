"""Which known name a misspelt one means: `tgas` for `tags`, `applies-to` for `applies_to`,
`limt` for `limit`. For names people type into files engram reads (frontmatter keys, config
settings), where a typo would otherwise be tolerated in silence. Stdlib only."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_\s]")


def near_miss(name: str, known: tuple[str, ...] | list[str]) -> str | None:
    """The known name ``name`` is a misspelling of: the same but for separators and case, or one
    edit away (two for names of six letters or more; a swap of neighbours is one edit). None for a
    known name or one far from all of them."""
    if name in known:
        return None
    plain = _SEPARATORS.sub("", name.lower())
    for candidate in known:
        if plain == _SEPARATORS.sub("", candidate) or edits(name, candidate) <= (2 if len(candidate) >= 6 else 1):
            return candidate
    return None


def edits(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    neighbours; 3 for any pair whose lengths differ by more than 2 (more than a near miss allows)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]
