"""Read-only queries of one index, answered from memory while the index is unchanged.

Routing asks an index the same things again and again: how many memories hold `add`, which
ones hold `api` in their tags, which memories the visibility rule hides. Each answer of a
common word costs a read of its whole doclist (a millisecond or more at 10,000 memories), and
common words are the ones every task repeats. Inside `engram watch` (one process serving every
call) the answers are kept per index, for as long as the index file is the one the watcher
vouched for: a refresh gives the file another stamp (`freshness.file_stamp`) and the kept
answers of the old one are dropped. Without a watcher's word for the file nothing is kept; a
process that answers one call keeps its answers only until it exits. Stdlib only.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict

from .index import tuple_cursor

# What kept answers may weigh per index: a string counts its characters, any other value
# KEPT_VALUE_WEIGHT (an int in a tuple costs about that many bytes). About 8 MB at most.
KEPT_WEIGHT = 8_000_000
KEPT_VALUE_WEIGHT = 32
KEPT_INDEXES = 4  # a watcher answers for its own index, and sometimes another project's

Answer = list[tuple]
Params = tuple | dict[str, object]  # positional, or named


class Reads:
    """An index's read-only queries, each run when asked."""

    def __init__(self, conn: sqlite3.Connection, exported: bool = False) -> None:
        self.conn = conn
        self.exported = exported  # its term counts and fixed hidden sets are tables of its own (`exported`)

    def rows(self, sql: str, params: Params = ()) -> Answer:
        """The query's rows as plain tuples."""
        return tuple_cursor(self.conn).execute(sql, params).fetchall()


class KeptReads(Reads):
    """An index's read-only queries, answered from ``kept`` where asked before of this index file."""

    def __init__(self, conn: sqlite3.Connection, kept: Kept) -> None:
        super().__init__(conn)
        self.kept = kept

    def rows(self, sql: str, params: Params = ()) -> Answer:
        key = (sql, tuple(sorted(params.items())) if isinstance(params, dict) else params)
        answer = self.kept.get(key)
        if answer is None:
            answer = super().rows(sql, params)
            self.kept.put(key, answer)
        return answer


class Kept:
    """Answers of one index file, the least recently used dropped first beyond ``limit`` (`_weight`)."""

    def __init__(self, stamp: str, limit: int = KEPT_WEIGHT) -> None:
        self.stamp = stamp
        self.limit = limit
        self.answers: OrderedDict[tuple[str, tuple], Answer] = OrderedDict()
        self.weight = 0

    def get(self, key: tuple[str, tuple]) -> Answer | None:
        answer = self.answers.get(key)
        if answer is not None:
            self.answers.move_to_end(key)
        return answer

    def put(self, key: tuple[str, tuple], answer: Answer) -> None:
        weight = _weight(answer)
        if weight > self.limit:
            return
        replaced = self.answers.pop(key, None)
        if replaced is not None:
            self.weight -= _weight(replaced)
        self.answers[key] = answer
        self.weight += weight
        while self.weight > self.limit:
            _, dropped = self.answers.popitem(last=False)
            self.weight -= _weight(dropped)


def _weight(answer: Answer) -> int:
    return sum(len(value) if isinstance(value, str) else KEPT_VALUE_WEIGHT for row in answer for value in row) + 1


_KEPT: dict[str, Kept] = {}  # per index path, the answers of the file with that stamp, least recently asked first


def reads_for(conn: sqlite3.Connection, index_path: str, stamp: str | None, exported: bool = False) -> Reads:
    """The index's reads: kept across calls where ``stamp`` says which file it is (one an `engram
    watch` vouched for), else run each time; ``exported``: the file carries `exported`'s tables."""
    if stamp is None:
        return Reads(conn, exported)
    kept = _KEPT.pop(index_path, None)
    if kept is None or kept.stamp != stamp:
        kept = Kept(stamp)
    while len(_KEPT) >= KEPT_INDEXES:
        del _KEPT[next(iter(_KEPT))]  # the index asked least recently
    _KEPT[index_path] = kept
    return KeptReads(conn, kept)
