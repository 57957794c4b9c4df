"""Read flow, step 3: the evidence each memory of one index holds for a query's anchors.

FTS5's ``fts5vocab`` tables give, for a term, how many memories hold it (the row
table: one lookup) and where: per memory and per field, how often (the instance
table). From that come the memories worth judging and, for each, what
`relevance` judges it by: which anchors it holds, in which fields, how rare they
are in this folder, and a field-weighted BM25 (BM25F). Nothing here depends on
the share of the query a memory covers, so a 300-word bug report that names a
memory's subject once holds the same evidence for it as a three-word task.
Stdlib only.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter

from . import exported
from .index import FTS_COLUMNS, tuple_cursor
from .reads import Reads
from .terms import Word, held_by_any_bigram, holds_enough

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .route import Anchor

# The FTS columns, their BM25F weights, and the field each belongs to.
COLUMNS = FTS_COLUMNS
COLUMN_INDEX = {name: index for index, name in enumerate(COLUMNS)}
COLUMN_WEIGHTS = (6.0, 5.0, 4.0, 2.5, 2.5, 1.0, 3.0)
NAME, LEAD, BODY, PATHS = "name", "lead", "body", "paths"  # id, tags | directive, summary, triggers | body | applies_to
FIELD_OF = (NAME, NAME, LEAD, LEAD, LEAD, BODY, PATHS)
STRONG_COLUMNS = frozenset({0, 1, 2, 6})
NAME_COLUMNS = frozenset({0, 1})  # id, tags
BODY_COLUMN = 5  # the anchor rule's strong fields: id, tags, directive, applies_to
K1, B = 1.2, 0.75  # BM25's term saturation and length normalisation
# The most specific anchors a query is judged on: a pasted log or file is no task description,
# and every anchor looked up costs a query per term. Ordinary words past these weigh little.
LOOKED_UP = 48
# Memories scored with BM25F (by a cheap first score): far above any pack (load.limit <= 32).
WINDOW = 128
# An anchor more memories hold than this is read per field, not per memory: one count per field
# that holds it instead of its occurrences, read with one FTS query per field. Reading each of
# hundreds of holders' occurrences was most of a query's cost in big folders; applied from 20
# memories on over the 257-rule folders it moved no set's hit by more than 0.03 (docs/routing.md).
# Above the largest labelled folder (257 memories): no labelled pack changes.
PER_FIELD_DF = 300
# Such an anchor held by more than BROAD_DF memories and this share of the folder is broad there
# ("add", "api", "users" in a big folder): it weighs little. Once rarer anchors reach a WINDOW of
# memories, it only adds to those (docs/routing.md). No bundled folder has a word this common.
BROAD_DF = 1000
BROAD_SHARE = 0.05
PREFIX_FROM = 6  # letters of a stem that may stand for its longer family (docs/routing.md)
PREFIX_LOOKUPS = 16  # unknown words looked up as prefixes at most (a range query each, 0.2 ms at 10,000)

COLUMN_MATCH_SQL = (  # one string, no row objects; json's C decoder turns it into ints fastest
    "SELECT json_group_array(rowid) FROM memories_fts WHERE memories_fts MATCH ?"
)
VOCAB_ROWS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_rows USING fts5vocab(main, memories_fts, row)"
VOCAB_INSTANCES = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_instances USING fts5vocab(main, memories_fts, instance)"
)
VOCAB_COLUMNS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_columns USING fts5vocab(main, memories_fts, col)"
# The term counts, by whether the index is an exported one: from fts5vocab, or from the tables of
# them it carries (`exported`).
ROW_COUNTS = {False: "temp.engram_rows", True: exported.ROWS_TABLE}
COLUMN_COUNTS = {False: "temp.engram_columns", True: exported.COLUMNS_TABLE}
COLUMN_DF_SQL = {key: f"SELECT col, doc FROM {table} WHERE term = ?" for key, table in COLUMN_COUNTS.items()}
COUNT_MATCH_SQL = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
STRONG_FILTER = "{" + " ".join(COLUMNS[column] for column in sorted(STRONG_COLUMNS)) + "}"
DF_SQL = {key: f"SELECT doc FROM {table} WHERE term = ?" for key, table in ROW_COUNTS.items()}
PREFIX_DF_SQL = {key: f"SELECT max(doc) FROM {table} WHERE term >= ? AND term < ?" for key, table in ROW_COUNTS.items()}
INSTANCES_SQL = "SELECT doc, col, count(*) FROM temp.engram_instances WHERE term = ? GROUP BY doc, col"
PREFIX_SQL = "SELECT doc, col, count(*) FROM temp.engram_instances WHERE term >= ? AND term < ? GROUP BY doc, col"
AVERAGES_SQL = "SELECT block FROM memories_fts_data WHERE id = 1"
LENGTHS_SQL = "SELECT id, sz FROM memories_fts_docsize WHERE id IN ({})"


class Found:
    """One memory's evidence: for each anchor it holds, the term count in each column."""

    __slots__ = ("rowid", "counts", "bm25", "parts", "name_length")

    def __init__(self, rowid: int) -> None:
        self.rowid = rowid
        self.counts: dict[int, list[float]] = {}  # anchor index -> count per column
        self.bm25 = 0.0
        self.parts: dict[int, float] = {}  # anchor index -> its share of `bm25`
        self.name_length = 0  # terms in the id and tags (set when scored)

    def restricted(self, anchors: frozenset[int]) -> Found:
        """The memory's evidence for some of the query's anchors only (`Evidence.restricted`)."""
        part = Found(self.rowid)
        part.counts = {anchor: counts for anchor, counts in self.counts.items() if anchor in anchors}
        part.parts = {anchor: share for anchor, share in self.parts.items() if anchor in anchors}
        part.bm25 = sum(part.parts.values())
        part.name_length = self.name_length
        return part

    def name_coverage(self) -> float:
        """The share of the memory's id and tag terms that the query holds."""
        held = sum(counts[0] + counts[1] for counts in self.counts.values())
        return min(1.0, held / self.name_length) if self.name_length else 0.0

    def fields(self, anchor: int) -> set[str]:
        """The fields (NAME, LEAD, BODY, PATHS) where the memory holds an anchor."""
        return {FIELD_OF[column] for column, count in enumerate(self.counts[anchor]) if count}

    def names_any(self, anchors: list[int]) -> bool:
        """Whether the memory's id or tags hold any of these anchors."""
        return any(anchor in self.counts and NAME in self.fields(anchor) for anchor in anchors)

    def body_count(self, anchor: int) -> float:
        return self.counts[anchor][BODY_COLUMN]

    def in_strong_field(self, anchor: int) -> bool:
        counts = self.counts[anchor]
        return any(counts[column] for column in STRONG_COLUMNS)


class Evidence:
    """What one index holds for a query's anchors: every memory holding one, and each anchor's rarity."""

    def __init__(self, reads: Reads, anchors: list[Anchor]) -> None:
        if not reads.exported:
            reads.conn.execute(VOCAB_ROWS)
        reads.conn.execute(VOCAB_INSTANCES)
        self.averages = _averages(reads)
        self.total = self.averages[0] if self.averages else 0
        # Every memory holding an anchor, in the order reached (ties of the first score keep it), with
        # what the anchor rule asks: how many query words (not two-word names) it holds, whether one
        # in a strong field. Counters and sets: a common word's holders are tens of thousands.
        self.reached: dict[int, None] = {}
        self.words: Counter[int] = Counter()
        self.strong_rows: set[int] = set()
        self.found: dict[int, Found] = {}  # the reached memories whose counts are made: read whole, or scored
        self.name_holders: dict[int, int] = {}  # per anchor, the memories holding it in the id or tags
        self.strong: set[int] = set()  # the anchors some memory holds in a strong field
        self.first: dict[int, float] = {}  # per memory, the cheap first score `window` ranks by
        self.reach: list[str] = []  # an FTS5 phrase of each term read in full: what `found` holds
        self.reach_rows = 0  # how many memories those terms reach, counted once per anchor
        self.presence: dict[int, list[set[int]]] = {}  # per anchor read per field, the memories holding it
        self.counted: set[int] = set()  # the memories whose counts of those anchors are made (`score`)
        self.term_df: dict[str, int] = {}  # memories holding a term: fts5vocab counts them by reading its doclist
        self.estimates = [_estimated_df(reads, anchor, self.term_df) for anchor in anchors]  # about, per anchor
        # A word no memory holds, long enough to be a stem of its own (`memoize`), finds the longer
        # words of its family (`memoization`) as a prefix.
        unknown = [i for i, a in enumerate(anchors) if not self.estimates[i] and _can_be_prefix(a)]
        self.prefixed = set(unknown[:PREFIX_LOOKUPS])  # the first ones: a pasted log has hundreds
        for i in self.prefixed:
            self.estimates[i] = _estimated_df(reads, anchors[i], self.term_df, prefix=True)
        held = sorted((i for i, df in enumerate(self.estimates) if df), key=self.estimates.__getitem__)
        self.looked_up = set(held[:LOOKED_UP])
        common = {
            i for i in self.looked_up
            if _can_be_per_field(anchors[i]) and i not in self.prefixed and self.estimates[i] > PER_FIELD_DF
        }  # fmt: skip
        broad_from = max(BROAD_DF, BROAD_SHARE * self.total)
        broad = [
            i for i in held[:LOOKED_UP] if i in common and self.estimates[i] > broad_from and _can_be_broad(anchors[i])
        ]  # fmt: skip
        self.df = [0] * len(anchors)
        for index in sorted(self.looked_up.difference(broad)):
            self.df[index] = self._add(reads, index, anchors[index], per_field=index in common)
        for index in broad:  # rarest first: joining them while they reach too few memories to judge
            self.df[index] = self._add(reads, index, anchors[index], per_field=True, whole=len(self.reached) < WINDOW)
        self.idf = [idf(self.total, df) for df in self.df]
        self.top_idf = idf(self.total, 1)  # a word only one memory holds: what `specificity` scales to
        self.anchor_count = len(anchors)  # the query's anchors (`restricted`: a part of them)

    def restricted(self, anchors: frozenset[int]) -> Evidence:
        """This evidence as if the query held only these anchors (one clause of a task about two
        subjects, `route.clauses_of`): the others held by no memory."""
        part = object.__new__(Evidence)  # a shallow copy (the `copy` module is not loaded on the hook path)
        part.__dict__.update(self.__dict__)
        part.df = [df if index in anchors else 0 for index, df in enumerate(self.df)]
        part.anchor_count = len(anchors)
        return part

    def specificity(self, anchor: int) -> float:
        """An anchor's IDF as a share of the highest one this folder allows: comparable across folder sizes."""
        return self.idf[anchor] / self.top_idf if self.df[anchor] and self.top_idf else 0.0

    def _add(self, reads: Reads, index: int, anchor: Anchor, per_field: bool = False, whole: bool = True) -> int:
        """Record the anchor's counts in every memory holding it; return how many do. On the way,
        what whole-folder passes would otherwise count: name holders, strong anchors, first scores.
        The word of an anchor read ``per_field`` (`PER_FIELD_DF`) is recorded by `_add_per_field`
        (read not ``whole``, a broad word only adds to the memories already found), its glued names here."""
        word = anchor.word
        prefix = index in self.prefixed
        terms = [] if per_field else [(term, prefix, False) for term in word.terms]
        parts = terms + [(term, False, True) for term in anchor.joined]
        share = 1 / len(word.terms) if word.cjk else 1.0  # a CJK word is held in part by each of its bigrams
        weight = idf(self.total, self.estimates[index])  # for the first score: the df estimate is enough
        held: dict[int, list[float]] = {}  # memory -> count per column, of this anchor
        named: set[int] = set()
        strong_rows: set[int] = set()
        first = self.first
        # a katakana or Korean word: which memories hold enough of its bigrams, from its bigrams' rows read once
        partial = word.cjk and len(word.terms) > 1 and not per_field and not held_by_any_bigram(word)
        read = {(term, prefix): _instances(reads, term, prefix) for term in word.terms} if partial else {}
        enough = _holding_enough(word, [read[term, prefix] for term in word.terms]) if partial else None
        for term, prefix, strong_only in parts:
            strong_only = strong_only or anchor.pair  # a name is a memory's subject only where subjects are named
            scale = 1.0 if strong_only else share
            rows = read[term, prefix] if (term, prefix) in read else _instances(reads, term, prefix)
            for rowid, name, count in rows:
                column = COLUMN_INDEX[name]
                if (strong_only and column not in STRONG_COLUMNS) or (anchor.inside and column in NAME_COLUMNS):
                    continue
                if enough is not None and (rowid, name) not in enough and not strong_only:
                    continue
                counts = held.get(rowid)
                if counts is None:
                    counts = held[rowid] = [0.0] * len(COLUMNS)
                if not counts[column]:
                    first[rowid] = first.get(rowid, 0.0) + weight * COLUMN_WEIGHTS[column]
                    if column < 2:
                        named.add(rowid)
                    if column in STRONG_COLUMNS:
                        strong_rows.add(rowid)
                counts[column] += count * scale
            self.reach.append(_phrase(term, prefix, strong_only))
        self.reach_rows += len(held)
        self.reached.update(dict.fromkeys(held))
        for rowid, counts in held.items():
            self._found(rowid).counts[index] = counts
        if not anchor.pair:
            self.words.update(held.keys())  # a Counter adds a mapping's values: its keys are counted
        self.strong_rows |= strong_rows
        holders, name_holders, strong_elsewhere = len(held), len(named), False
        if per_field:
            holders, name_holders, strong_elsewhere = self._add_per_field(
                reads, index, word.terms, weight, held, named, whole, anchor.inside
            )
        if name_holders:
            self.name_holders[index] = name_holders
        if strong_rows or strong_elsewhere:
            self.strong.add(index)
        return holders

    def _add_per_field(
        self,
        reads: Reads,
        index: int,
        terms: tuple[str, ...],
        weight: float,
        glued: dict,
        named: set[int],
        whole: bool,
        inside: bool = False,
    ) -> tuple[int, int, bool]:
        """A common word (any of its ``terms``: `postgres` is `postgr` or `postgresql`): which memories
        hold it in which column, from one FTS query per column that holds it, recorded as one count
        per column (`presence`, made counts by `score`). Read ``whole``, its holders join `found`; a
        broad word read once rarer anchors reach a WINDOW of memories only adds to the memories they
        (or its ``glued`` names) reached, and FTS5 intersects it with their terms (`reach`) where
        that is the shorter read, skipping through its long doclist. Returned, over the whole folder:
        how many memories hold it, how many in their id or tags, and whether one holds it in a
        strong field. A word ``inside`` an identifier is not read in ids and tags (`Anchor.inside`)."""
        column_df = _column_df(reads, terms)
        if inside:
            column_df = {name: docs for name, docs in column_df.items() if COLUMN_INDEX[name] not in NAME_COLUMNS}
        phrase, reached = _phrase_of(terms), self.reached.keys()
        columns: list[set[int]] = []
        every: dict[int, set[int]] = {}  # per column read in full, every memory holding the word there
        for column, name in enumerate(COLUMNS):
            docs = sum(column_df.get(name, {}).values())  # at most: a memory may hold two of the terms
            listed = exported.holders(reads.conn, name, list(column_df[name])) if docs and reads.exported else None
            if not docs:
                columns.append(set())
                every[column] = columns[-1]
            elif listed is not None:  # an exported index lists them
                every[column] = listed
                columns.append(listed if whole else listed.intersection(reached))
            elif self.reach_rows < docs and not whole:
                columns.append(_rowids(reads, f"{{{name}}}: {phrase} AND ({' OR '.join(self.reach)})"))
            else:
                every[column] = _rowids(reads, f"{{{name}}}: {phrase}")
                columns.append(every[column] if whole else every[column].intersection(reached))
        holding = set().union(*columns)
        self._record_presence(index, weight, columns, holding, glued)
        if whole:
            self.reach.append(phrase)
            self.reach_rows += len(holding)
        name_holders = _name_holders(reads, phrase, column_df, every)
        name_holders += len(named.difference(columns[0], columns[1]))  # its glued names' holders without it
        strong_elsewhere = any(column_df.get(COLUMNS[column]) for column in STRONG_COLUMNS)
        # A shorthand with its full name is read whole (`_can_be_broad`): its holders are all read.
        holders = _df(reads, terms[0], self.term_df) if len(terms) == 1 else len(holding)
        return holders + len(glued.keys() - holding), name_holders, strong_elsewhere

    def _record_presence(
        self, index: int, weight: float, columns: list[set[int]], holding: set[int], glued: dict
    ) -> None:
        """A common word's holders (``columns``, per column) reached: their first scores, held words
        and strong fields now, their counts when scored. Set operations and one addition per memory and
        column: thousands of memories hold such a word."""
        first = self.first
        self.reached.update(dict.fromkeys(holding.difference(self.reached)))
        self.words.update(holding.difference(glued))  # a glued name's holder already counts the anchor
        for column, rows in enumerate(columns):
            counted = [rowid for rowid, counts in glued.items() if counts[column]]  # by a glued name
            bonus = weight * COLUMN_WEIGHTS[column]
            for rowid in rows.difference(counted) if counted else rows:
                first[rowid] = first.get(rowid, 0.0) + bonus
            if column in STRONG_COLUMNS:
                self.strong_rows |= rows
        self.presence[index] = columns

    def _found(self, rowid: int) -> Found:
        """The memory's counts, made when first needed."""
        found = self.found.get(rowid)
        if found is None:
            found = self.found[rowid] = Found(rowid)
        return found

    def passes_anchor_rule(self, rowid: int) -> bool:
        """The spec's rule for a query of `match.MANY_ANCHORS` or more words: two of them held, or
        one held in a strong field (id, tag, directive, applies_to). A two-word name is no word
        here: it is held in a strong field or not at all."""
        return self.words[rowid] >= 2 or rowid in self.strong_rows

    def window(self, rowids: list[int]) -> list[int]:
        """The WINDOW memories worth scoring, by a cheap first score (`_add`): the IDF of each anchor
        held, times the weights of the columns holding it (BM25F without lengths or saturation)."""

        return sorted(rowids, key=self.first.__getitem__, reverse=True)[:WINDOW] if len(rowids) > WINDOW else rowids

    def score(self, conn: sqlite3.Connection, rowids: list[int]) -> None:
        """BM25F of some memories over the anchors each holds (the counts of those read per field made here)."""
        self._count_presence(rowids)
        lengths = _lengths(conn, rowids)
        rows = max(1, self.total)
        averages = [max(1.0, total / rows) for total in self.averages[1:]] or [1.0] * len(COLUMNS)
        for rowid in rowids:
            found = self.found[rowid]
            sizes = lengths.get(rowid) or (0,) * len(COLUMNS)
            found.name_length = sizes[0] + sizes[1]
            norms = [1 - B + B * size / average for size, average in zip(sizes, averages)]
            found.parts = {
                anchor: self.idf[anchor] * _saturate(sum(w * c / n for w, c, n in zip(COLUMN_WEIGHTS, counts, norms)))
                for anchor, counts in found.counts.items()
            }
            found.bm25 = sum(found.parts.values())

    def _count_presence(self, rowids: list[int]) -> None:
        """Some memories' counts of the anchors read per field: one per column holding it, added to
        what a glued name of the anchor counted (once a memory: scoring it again adds nothing)."""
        rowids = [rowid for rowid in rowids if rowid not in self.counted]
        self.counted.update(rowids)
        for index, columns in self.presence.items():
            for rowid in rowids:
                held = [1.0 if rowid in rows else 0.0 for rows in columns]
                if any(held):
                    counts = self._found(rowid).counts
                    glued = counts.get(index)
                    counts[index] = [a + b for a, b in zip(glued, held)] if glued else held


def _saturate(weighted: float) -> float:
    return weighted * (K1 + 1) / (weighted + K1)


def idf(total: int, df: int | float) -> float:
    """BM25's IDF, never negative (a word in most memories weighs little, not less than nothing)."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _phrase(term: str, prefix: bool = False, strong_only: bool = False) -> str:
    """A term as an FTS5 query: quoted (the index holds it as one token), as a prefix, in strong fields."""
    quoted = '"' + term.replace('"', '""') + '"' + (" *" if prefix else "")
    return f"{STRONG_FILTER}: {quoted}" if strong_only else quoted


def _phrase_of(terms: tuple[str, ...]) -> str:
    """Any of a word's terms as an FTS5 query."""
    return _phrase(terms[0]) if len(terms) == 1 else "(" + " OR ".join(map(_phrase, terms)) + ")"


def _column_df(reads: Reads, terms: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per column, how many memories hold each of the terms there (the column vocabulary)."""
    if not reads.exported:
        reads.conn.execute(VOCAB_COLUMNS)
    out: dict[str, dict[str, int]] = {}
    for term in terms:
        for column, docs in reads.rows(COLUMN_DF_SQL[reads.exported], (term,)):
            out.setdefault(column, {})[term] = docs
    return out


def _name_holders(reads: Reads, phrase: str, column_df: dict[str, dict[str, int]], every: dict[int, set[int]]) -> int:
    """How many memories hold a common word in their id or tags: the column vocabulary's count for
    one term in one name column, else the union of the two columns where both were read in full,
    else FTS5's count."""
    name_docs = [docs for name in COLUMNS[:2] for docs in column_df.get(name, {}).values()]
    if len(name_docs) <= 1:
        return sum(name_docs)
    if 0 in every and 1 in every:
        return len(every[0] | every[1])
    return _count(reads, f"{{{COLUMNS[0]} {COLUMNS[1]}}}: {phrase}")


def _count(reads: Reads, match: str) -> int:
    ((count,),) = reads.rows(COUNT_MATCH_SQL, (match,))
    return count


def _df(reads: Reads, term: str, known: dict[str, int]) -> int:
    """How many memories hold the term (the row vocabulary), remembered in ``known``."""
    if term not in known:
        rows = reads.rows(DF_SQL[reads.exported], (term,))
        known[term] = rows[0][0] if rows else 0
    return known[term]


def _rowids(reads: Reads, match: str) -> set[int]:
    ((listed,),) = reads.rows(COLUMN_MATCH_SQL, (match,))
    return set(json.loads(listed))


def _can_be_per_field(anchor: Anchor) -> bool:
    """Plain terms: no CJK bigrams (each holds the word in part), not a two-word name (strong fields only)."""
    return not anchor.word.cjk and not anchor.pair


def _can_be_broad(anchor: Anchor) -> bool:
    """One term: a shorthand read with its full name (`postgres`: `postgr`, `postgresql`) names a
    technology, whose holders stay candidates however common it is (docs/routing.md)."""
    return len(anchor.word.terms) == 1


def _can_be_prefix(anchor: Anchor) -> bool:
    terms = anchor.word.terms
    return _can_be_per_field(anchor) and len(terms) == 1 and len(terms[0]) >= PREFIX_FROM and terms[0].isalpha()


def holders(reads: Reads, anchors: list[Anchor]) -> list[int]:
    """About how many memories hold each anchor (as `Evidence.estimates`), without reading where."""
    if not reads.exported:
        reads.conn.execute(VOCAB_ROWS)
    known: dict[str, int] = {}
    return [_estimated_df(reads, anchor, known) for anchor in anchors]


def _estimated_df(reads: Reads, anchor: Anchor, known: dict[str, int], prefix: bool = False) -> int:
    """How many memories hold the anchor's likeliest term: one lookup in the row vocabulary. The word's
    terms are looked up as prefixes where `_add` reads them so (``prefix``), its glued names never."""
    best = 0
    for term, wide in [(term, prefix) for term in anchor.word.terms] + [(term, False) for term in anchor.joined]:
        if wide:
            ((df,),) = reads.rows(PREFIX_DF_SQL[reads.exported], (term, term + "\uffff"))
        else:
            df = _df(reads, term, known)
        best = max(best, df or 0)
    return best


def _holding_enough(word: Word, rows: list[list[tuple]]) -> set[tuple[int, str]]:
    """The fields of memories holding enough of a CJK word's bigrams (``rows``: each bigram's
    instances, in the word's order) to hold the word (`terms.holds_enough`): one field, so that
    the ース of a tag `データベース` is no `リリース` where the body holds リリ and リー."""
    holders = [{(rowid, name) for rowid, name, _ in bigram_rows} for bigram_rows in rows]
    candidates = set().union(*holders)
    return {field for field in candidates if holds_enough(word, [field in rows for rows in holders])}


def _instances(reads: Reads, term: str, prefix: bool) -> list[tuple]:
    if prefix:
        return reads.rows(PREFIX_SQL, (term, term + "\uffff"))
    return reads.rows(INSTANCES_SQL, (term,))


def memory_count(reads: Reads) -> int:
    """How many memories an index holds (its FTS5 row count)."""
    averages = _averages(reads)
    return averages[0] if averages else 0


def _averages(reads: Reads) -> list[int]:
    """FTS5's averages record: the row count, then the total tokens of each column."""
    rows = reads.rows(AVERAGES_SQL)
    return _varints(rows[0][0]) if rows and rows[0][0] else []


def _lengths(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple[int, ...]]:
    """The token count of each column of some memories (FTS5's docsize table)."""
    out: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(rowids), 900):
        chunk = rowids[start : start + 900]
        for rowid, size in tuple_cursor(conn).execute(LENGTHS_SQL.format(",".join("?" * len(chunk))), chunk):
            out[rowid] = tuple(_varints(size))
    return out


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (7 bits a byte, high bit set on all but the last, the 9th byte whole)."""
    out, value, length = [], 0, 0
    for byte in blob:
        length += 1
        if length == 9:
            out.append(value << 8 | byte)
            value = length = 0
        elif byte & 0x80:
            value = value << 7 | byte & 0x7F
        else:
            out.append(value << 7 | byte)
            value = length = 0
    return out
