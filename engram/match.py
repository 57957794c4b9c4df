"""Read flow, step 3: judge every memory of one index that a query word matched.

One FTS5 match per term gives the memories each anchor hits (cheap, rowids
only), and for a rare term the memories whose body repeats it (FTS5's
``fts5vocab`` instance table). A memory's judgement (coverage, strong-field
hits, the anchor rule) depends only on which anchors it hit and how, so
memories are grouped by that pattern (with set operations, or for a long query
a mask per memory) and judged once per group, not once per memory: a word can
be in thousands of them. The groups also tell the query's subjects
(`Plan.find_subjects`), which let memories about them cover it. Visibility
comes from one scan of a covering index. BM25 is the costly part, so only
admitted memories that cover the query (the only ones that can pack) are
scored: FTS5 ``bm25()`` with column weights, divided by FTS5's own IDF (clamped
to 1e-6 for a term in half the rows or more, which makes small folders rank by
noise) and multiplied by an unclamped one. Stdlib only.
"""

from __future__ import annotations

import math
import sqlite3

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: hooks start on every event
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .layers import Layer
    from .route import Anchor, Options

# Column weights, in FTS column order: id, tags, directive, summary, triggers, body, paths.
COLUMN_WEIGHTS = (6.0, 5.0, 4.0, 2.5, 2.5, 1.0, 3.0)
STRONG_COLUMNS = "{id tags directive paths}"  # the anchor rule's strong fields (paths: applies_to)
MULTIPLIERS = {"review_due": 0.7, "stale": 0.6, "medium": 0.9, "workspace": 1.1}
FETCH_BOOST_STEP = 0.05  # per earlier `load --id`, up to FETCH_BOOST_MAX
FETCH_BOOST_MAX = 1.2
SKILL_BOOST = 1.25  # `workflow` in the query routes to skill memories
MANY_ANCHORS = 4
# Up to this many query words, memories are grouped with set operations; beyond, by a mask per memory.
FEW_ANCHORS = 8
SPECIFIC_SHARE = 0.15  # a strong-field hit on a word at most this share of memories have is "specific"
# A body that repeats a word at most this share of memories have (one memory at least, for small
# folders), this many times and this often per token, is about that word (a keyword of the
# memory): its hit is specific, as in a strong field.
KEYWORD_SHARE = 0.05
KEYWORD_MIN_COUNT = 2
KEYWORD_DENSITY = 0.004
# A word no memory has weighs at most this times the mean of the words found. A Latin word
# the corpus never saw hints at another subject (or a typo); a number or code (`12`, `5k`) does
# not, and an absent CJK run is mostly a segmentation fragment (particles, a split word), so
# those weigh no more than a found word. Absence says more the more memories there are: in a
# folder of a few dozen many ordinary words are simply not written yet, so the extra weight
# grows with the folder and is whole from ABSENT_FULL_AT memories.
ABSENT_WEIGHT = 1.4
ABSENT_FRAGMENT_WEIGHT = 1.0
ABSENT_FULL_AT = 100
# A memory covers the query (and may pack) with this share of the anchor weight, or this share
# matched in strong fields, or a strong-field hit on a specific word and this share.
MIN_COVERAGE = 0.6
MIN_STRONG_COVERAGE = 0.45
MIN_SPECIFIC_COVERAGE = 0.35

# Why a memory is hidden from a normal load (NULL when visible): the one rule of visibility,
# for routed, tagged, path-matched and fetched memories alike. Its columns have a covering index.
HIDDEN_SQL = """CASE
    WHEN m.ignored THEN 'ignored'
    WHEN :roles != '[]' AND m.roles != '[]' AND NOT EXISTS (
        SELECT 1 FROM json_each(m.roles) AS r WHERE r.value IN (SELECT value FROM json_each(:roles))) THEN 'role'
    WHEN m.lifecycle IN ('archived', 'superseded') THEN 'lifecycle'
    WHEN coalesce(m.valid_until, '') != '' AND m.valid_until < :today THEN 'lifecycle'
    WHEN m.confidence = 'low' AND NOT :include_low THEN 'confidence'
END"""
HIDDEN_ROWS_SQL = f"SELECT m.rowid, {HIDDEN_SQL} AS hidden FROM memories AS m WHERE hidden IS NOT NULL"
SCORE_SQL = (
    "SELECT memories_fts.rowid, bm25(memories_fts, {weights}) FROM memories_fts"
    " CROSS JOIN temp.worth AS w ON w.rid = memories_fts.rowid WHERE memories_fts MATCH ?"
).format(weights=", ".join(map(str, COLUMN_WEIGHTS)))
KEYWORD_SQL = (
    "SELECT v.doc FROM temp.memories_vocab AS v JOIN memories AS m ON m.rowid = v.doc"
    " WHERE v.term = ? AND v.col = 'body' GROUP BY v.doc HAVING count(*) >= ? AND count(*) >= ? * m.tokens"
)
FACTS_SQL = (
    "SELECT m.rowid, m.id, m.lifecycle, m.confidence, m.type, m.rel, m.source_sha256"
    " FROM temp.worth AS w JOIN memories AS m ON m.rowid = w.rid"
)


class Verdict:
    """How one pattern of anchor hits fares: shared by every memory with that pattern."""

    __slots__ = (
        "hit_mask", "keyword_mask", "coverage", "strong_coverage", "strong_hit", "specific", "passes", "covers",
        "subject_mask",
    )  # fmt: skip

    def __init__(self, plan: Plan, hit_mask: int, strong_mask: int, keyword_mask: int, named_mask: int = 0) -> None:
        # Thousands of patterns for a long prompt: work per set bit, not per anchor.
        content = hit_mask & plan.content_mask
        self.hit_mask, self.keyword_mask = hit_mask, keyword_mask  # keyword hits are hits, as strong ones
        self.coverage = plan.coverage(hit_mask)
        self.strong_coverage = plan.coverage(strong_mask)  # strong hits are content hits
        self.strong_hit = bool(strong_mask)
        self.specific = bool((strong_mask | keyword_mask) & plan.specific_mask)
        hits = content.bit_count()
        self.passes = hits >= 1 and (not plan.many or hits >= 2 or self.strong_hit)  # the anchor rule
        covers_alone = self.passes and (
            self.coverage >= MIN_COVERAGE
            or self.strong_coverage >= MIN_STRONG_COVERAGE
            or (self.specific and self.coverage >= MIN_SPECIFIC_COVERAGE)
        )
        # the query's subjects (`Plan.find_subjects`) that make it cover, when it does not alone; a
        # memory named for an anchor (``named_mask``) has it as a subject
        subjects = plan.subject_mask | (named_mask & plan.named_mask)
        self.subject_mask = 0 if covers_alone or not self.passes else strong_mask & subjects
        # a task with a rare subject is about it: a memory that never names it has only the
        # task's other words ("add a shadcn dialog ..." is no task for a Gherkin rule on dialogs)
        on_subject = not plan.subject_mask or bool(hit_mask & plan.subject_mask)
        self.covers = (covers_alone or bool(self.subject_mask)) and on_subject

    @property
    def anchors(self) -> list[int]:
        """The anchors hit (indices), for the few memories that become candidates."""
        return _bits(self.hit_mask)

    @property
    def keywords(self) -> list[int]:
        """The anchors the memory's body repeats as keywords (indices)."""
        return _bits(self.keyword_mask)


class Scored:
    """An admitted memory that got a BM25 score."""

    __slots__ = ("rid", "id", "score", "multipliers", "stale", "verdict")

    def __init__(self, rid: int, memory_id: str, verdict: Verdict) -> None:
        self.rid, self.id, self.verdict = rid, memory_id, verdict
        self.score = 0.0
        self.multipliers: list[tuple[str, float]] = []
        self.stale = False


class Plan:
    """One layer's anchors: the memories each one hits, and each anchor's weight."""

    def __init__(self, conn: sqlite3.Connection, anchors: list[Anchor]) -> None:
        self.total = conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        self.absent_word_weight = 1 + (ABSENT_WEIGHT - 1) * min(1.0, self.total / ABSENT_FULL_AT)
        self.specific_weight = idf(self.total, max(1.0, SPECIFIC_SHARE * self.total))
        words = sum(not anchor.pair for anchor in anchors)  # two-word names hit few memories: not counted
        self.many = words >= MANY_ANCHORS
        self.content_mask = sum(1 << i for i, a in enumerate(anchors) if not a.is_type_word)
        self.terms: list[tuple[str, float]] = []  # (FTS match, BM25 factor) of every term found
        self.glued_rows: dict[str, set[int]] = {}  # `_glued_rows`, by term
        self.grouping = SetGrouping() if words <= FEW_ANCHORS else MaskGrouping()
        weighed = [(self._add_pair if anchor.pair else self._add_anchor)(conn, index, anchor)
                   for index, anchor in enumerate(anchors)]  # fmt: skip
        self.weights = _cap_absent(weighed)
        self.found_mask = sum(1 << i for i, (_, found, _) in enumerate(weighed) if found)  # anchors some memory has
        self.total_weight = sum(w for i, w in enumerate(self.weights) if self.content_mask >> i & 1)
        self.share = 1 / self.total_weight if self.total_weight else 0.0  # of the weight, per unit
        self.specific_mask = sum(1 << i for i, w in enumerate(self.weights) if w >= self.specific_weight)
        self.subject_mask = self.named_mask = 0  # `find_subjects`
        # a one-character CJK word is a fragment (a verb stem, a particle run): never a subject
        self.word_mask = sum(1 << i for i, anchor in enumerate(anchors) if not anchor.word.prefix)

    def coverage(self, hit_mask: int) -> float:
        """The share of the query's anchor weight a pattern of hits covers."""
        return self.share * sum([self.weights[i] for i in _bits(hit_mask & self.content_mask)])

    def find_subjects(self, patterns: Iterable[Masks]) -> None:
        """The query's subjects: anchors whose memories (those holding the anchor in a strong
        field) together cover the query as one memory would have to (`MIN_COVERAGE`). The query
        is then about that subject. For a specific anchor each of those memories covers it: the
        general Angular rule packs for an Angular question whose other words only its neighbours
        use, and a memory that never names it does not (`Verdict`). A common one (Tailwind, in
        dozens of rules) names a subject too broad for that, and only the memory named for it
        (its id is the word) covers it (`named_mask`)."""
        reach: dict[int, int] = {}
        for hit_mask, strong_mask, _ in patterns:
            for index in _bits(strong_mask & self.content_mask & self.word_mask):
                reach[index] = reach.get(index, 0) | hit_mask
        subjects = sum(1 << i for i, hits in reach.items() if self.coverage(hits) >= MIN_COVERAGE)
        self.subject_mask, self.named_mask = subjects & self.specific_mask, subjects & ~self.specific_mask

    def _add_anchor(self, conn: sqlite3.Connection, index: int, anchor: Anchor) -> tuple[float, bool, float]:
        """The anchor's weight, whether any memory has it, and its `_absent_factor`. A CJK word's
        terms are its bigrams (weight: their mean IDF); a Latin word's are alternatives, itself
        and the word an abbreviation stands for (weight: the IDF of the memories either hits,
        which is also what each alternative's BM25 is scaled to: a rare literal `msg` must not
        outrank the memories about messages), and it glued to a neighbour in strong fields."""
        weights: list[float] = []
        counts: list[tuple[str, int]] = []  # (FTS match, memories it hits) of each term found
        hits: set[int] = set()
        strong: set[int] = set()
        keyword: set[int] = set()
        for term in anchor.word.terms:
            match = fts_query(term, anchor.word.prefix)
            rowids = _rowids(conn, match)
            weights.append(idf(self.total, len(rowids)))
            if not rowids:
                continue
            counts.append((match, len(rowids)))
            hits |= rowids
            if not anchor.is_type_word:
                strong |= _rowids(conn, fts_query(term, anchor.word.prefix, STRONG_COLUMNS))
                if len(rowids) <= max(1.0, KEYWORD_SHARE * self.total) and not anchor.word.prefix:
                    keyword |= _keyword_rowids(conn, term)
        for term in () if anchor.is_type_word else anchor.joined:  # scored as its pair (`_add_pair`)
            rowids = self._glued_rows(conn, term)
            hits |= rowids
            strong |= rowids
        self.grouping.add(index, (hits, strong, keyword))
        weight = sum(weights) / len(weights) if anchor.word.cjk else idf(self.total, len(hits))
        for match, count in counts:
            term_weight = idf(self.total, count) if anchor.word.cjk else weight
            self.terms.append((match, term_weight / _fts_idf(self.total, count)))
        return weight, bool(hits), self._absent_factor(anchor)

    def _add_pair(self, conn: sqlite3.Connection, index: int, anchor: Anchor) -> tuple[float, bool, float]:
        """A two-word name (`Anchor.pair`): its weight and whether any memory has it. A name no
        memory has weighs nothing: most adjacent words name nothing, and must not count against coverage."""
        [term] = anchor.word.terms
        rowids = self._glued_rows(conn, term)
        self.grouping.add(index, (rowids, rowids, set()))
        if not rowids:
            return 0.0, False, 0.0
        weight = idf(self.total, len(rowids))
        self.terms.append((fts_query(term, False, STRONG_COLUMNS), weight / _fts_idf(self.total, len(rowids))))
        return weight, True, 0.0

    def _glued_rows(self, conn: sqlite3.Connection, term: str) -> set[int]:
        """The memories with a glued name in a strong field; asked by the pair and both its words."""
        if (rowids := self.glued_rows.get(term)) is None:
            rowids = self.glued_rows[term] = _rowids(conn, fts_query(term, False, STRONG_COLUMNS))
        return rowids

    def _absent_factor(self, anchor: Anchor) -> float:
        """How many mean found words the anchor may weigh if absent: more for a word than a fragment."""
        word = anchor.word
        return self.absent_word_weight if word.text.isalpha() and not word.cjk else ABSENT_FRAGMENT_WEIGHT

    def groups(self) -> dict[Masks, set[int]]:
        """Every memory hit, grouped by its masks: (anchors hit, hit in strong fields, repeated as
        keywords), one bit per anchor in each."""
        return self.grouping.groups()


# An anchor's memories: (hit, hit in a strong field, repeated as a keyword), the last two within the first.
AnchorSets = tuple[set[int], set[int], set[int]]
Masks = tuple[int, int, int]


class SetGrouping:
    """Few anchors: each anchor's sets cut the groups in two, with set operations. No entry per
    memory, so a word in most of them costs little; but every anchor cuts every group, and with
    many anchors the groups multiply (see MaskGrouping)."""

    def __init__(self) -> None:
        self.sets: list[AnchorSets] = []  # in anchor order

    def add(self, index: int, sets: AnchorSets) -> None:
        self.sets.append(sets)

    def groups(self) -> dict[Masks, set[int]]:
        everything = set().union(*(hits for hits, _, _ in self.sets))
        parts = {(0, 0, 0): everything} if everything else {}
        for index, sets in enumerate(self.sets):
            for position, members in enumerate(sets):
                if members:
                    parts = _cut(parts, position, 1 << index, members)
        return parts


def _cut(parts: dict[tuple[int, ...], set[int]], position: int, bit: int, chosen: set[int]) -> dict:
    """Each group cut in two by a set: its members in the set get ``bit`` in mask ``position``."""
    out = {}
    for key, members in parts.items():
        if inside := members & chosen:
            out[key[:position] + (key[position] | bit,) + key[position + 1 :]] = inside
        if rest := members - inside:
            out[key] = rest
    return out


class MaskGrouping:
    """Many anchors (a pasted document): a mask per memory, filled as each anchor comes and
    holding no set per anchor; time and memory grow with the hits, not anchors x groups."""

    def __init__(self) -> None:
        self.masks: dict[int, list[int]] = {}

    def add(self, index: int, sets: AnchorSets) -> None:
        bit, (hits, strong, keyword), masks = 1 << index, sets, self.masks
        for rowid in hits:
            if (mask := masks.get(rowid)) is None:
                masks[rowid] = [bit, 0, 0]
            else:
                mask[0] |= bit
        for position, members in ((1, strong), (2, keyword)):
            for rowid in members:
                masks[rowid][position] |= bit

    def groups(self) -> dict[Masks, set[int]]:
        out: dict[Masks, set[int]] = {}
        for rowid, mask in self.masks.items():
            key = (mask[0], mask[1], mask[2])
            if (group := out.get(key)) is None:
                out[key] = {rowid}
            else:
                group.add(rowid)
        return out


def _bits(mask: int) -> list[int]:
    """The indices of a mask's set bits, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _cap_absent(weighed: list[tuple[float, bool, float]]) -> list[float]:
    """Words no memory contains still count against coverage, at most their `Plan._absent_factor`
    times the mean found word."""
    present = [w for w, found, _ in weighed if found]
    if not present:
        return [w for w, *_ in weighed]
    mean = sum(present) / len(present)
    return [w if found else min(w, mean * factor) for w, found, factor in weighed]


class Group:
    """Memories of one layer judged alike: their verdict, and why they are omitted (None: admitted)."""

    __slots__ = ("verdict", "reason", "rowids")

    def __init__(self, verdict: Verdict, reason: str | None, rowids: set[int]) -> None:
        self.verdict, self.reason, self.rowids = verdict, reason, rowids


class LayerMatch:
    """What routing needs from one layer: counts, scored memories, and the rest as groups."""

    def __init__(self, layer: Layer, found_mask: int) -> None:
        self.layer = layer
        self.found_mask = found_mask  # the anchors some memory of the layer has (`Plan.found_mask`)
        self.scored: list[Scored] = []  # admitted memories that cover the query, with scores
        self.unscored: list[Group] = []  # other admitted memories
        self.omitted: list[Group] = []  # hidden, or failing the anchor rule

    @property
    def admitted_count(self) -> int:
        """Memories that pass visibility and the anchor rule."""
        return len(self.scored) + sum(len(g.rowids) for g in self.unscored)

    @property
    def omitted_count(self) -> int:
        return sum(len(g.rowids) for g in self.omitted)

    def admitted(self) -> list[int]:
        return [s.rid for s in self.scored] + [rowid for g in self.unscored for rowid in g.rowids]


def match_layer(layer: Layer, anchors: list[Anchor], options: Options, skill_query: bool, score_all: bool) -> LayerMatch | None:
    """Judge the layer's memories the anchors hit; score the admitted that cover the query (all
    admitted with ``score_all``). None when no anchor term is in this index."""
    plan = Plan(layer.conn, anchors)
    if not plan.terms:
        return None
    hidden = _hidden_by_reason(layer.conn, options)
    out_of_sight = layer.shadowed.union(*hidden.values())  # the workspace copy of an id wins over the global one
    found, worth, groups = LayerMatch(layer, plan.found_mask), {}, plan.groups()
    plan.find_subjects(key for key, members in groups.items() if not members <= out_of_sight)
    named = _named(layer.conn, anchors, plan.named_mask)
    for key, members in groups.items():
        for part, named_mask in _by_name(members, named):
            verdict = Verdict(plan, *key, named_mask)
            if unseen := part & out_of_sight:
                part -= unseen
                found.omitted += [Group(verdict, why, out) for why, rowids in hidden.items() if (out := unseen & rowids)]
            if not part:
                continue
            if not verdict.passes:
                found.omitted.append(Group(verdict, "anchors", part))
            elif verdict.covers or score_all:
                worth.update(dict.fromkeys(part, verdict))
            else:
                found.unscored.append(Group(verdict, None, part))
    found.scored = _score(layer, plan, worth, options, skill_query)
    return found


def _named(conn: sqlite3.Connection, anchors: list[Anchor], mask: int) -> dict[int, int]:
    """The memories whose id is one of the anchors in ``mask``, with that anchor's bit."""
    out: dict[int, int] = {}
    for index in _bits(mask):
        for (rowid,) in _plain(conn).execute("SELECT rowid FROM memories WHERE id = ?", (anchors[index].text,)):
            out[rowid] = out.get(rowid, 0) | 1 << index
    return out


def _by_name(members: set[int], named: dict[int, int]) -> list[tuple[set[int], int]]:
    """A group's memories split by the anchors they are named for (`_named`): most name none."""
    if not named or members.isdisjoint(named):
        return [(members, 0)]
    parts: dict[int, set[int]] = {}
    for rowid in members:
        parts.setdefault(named.get(rowid, 0), set()).add(rowid)
    return [(part, mask) for mask, part in parts.items()]


def _hidden_by_reason(conn: sqlite3.Connection, options: Options) -> dict[str, set[int]]:
    """The layer's hidden memories, by reason (`HIDDEN_SQL`)."""
    sql = f"SELECT hidden, group_concat(rowid) FROM ({HIDDEN_ROWS_SQL}) GROUP BY hidden"
    return {reason: _rowid_set(joined) for reason, joined in _plain(conn).execute(sql, options.visibility_params())}


def _score(layer: Layer, plan: Plan, worth: dict[int, Verdict], options: Options, skill_query: bool) -> list[Scored]:
    """BM25 over the anchor terms, times the multipliers, for the memories worth it."""
    conn = layer.conn
    conn.execute("DROP TABLE IF EXISTS temp.worth")
    conn.execute("CREATE TEMP TABLE worth (rid INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp.worth VALUES (?)", ((rowid,) for rowid in worth))
    raw = dict.fromkeys(worth, 0.0)
    for match, factor in plan.terms:
        for rowid, bm25 in _plain(conn).execute(SCORE_SQL, (match,)):
            raw[rowid] -= factor * bm25  # FTS5's bm25() is negative: lower is better
    out = []
    for rowid, memory_id, lifecycle, confidence, memory_type, rel, source_sha in _plain(conn).execute(FACTS_SQL):
        scored = Scored(rowid, memory_id, worth[rowid])
        scored.stale = layer.is_stale(rel, source_sha)
        scored.multipliers = multipliers(
            lifecycle, confidence, scored.stale, layer.scope, options.fetch_counts.get((layer.scope, memory_id), 0),
            skill_query and memory_type == "skill",
        )
        scored.score = raw[rowid] * math.prod(factor for _, factor in scored.multipliers)
        out.append(scored)
    return out


def multipliers(
    lifecycle: str, confidence: str, stale: bool, scope: str, fetched: int, workflow: bool
) -> list[tuple[str, float]]:
    """The spec's multipliers that apply, in the order dry-run lists them."""
    out = []
    if lifecycle == "review_due":
        out.append(("review_due", MULTIPLIERS["review_due"]))
    if stale:
        out.append(("stale", MULTIPLIERS["stale"]))
    if confidence == "medium":
        out.append(("medium", MULTIPLIERS["medium"]))
    if scope == "workspace":
        out.append(("workspace", MULTIPLIERS["workspace"]))
    if fetched:
        out.append(("fetched", min(FETCH_BOOST_MAX, 1 + FETCH_BOOST_STEP * fetched)))
    if workflow:
        out.append(("workflow", SKILL_BOOST))
    return out


def fts_query(term: str, prefix: bool, columns: str = "") -> str:
    """A term as an FTS5 phrase: any text is a valid query, FTS syntax in it is quoted."""
    return f"{columns} : " * bool(columns) + '"' + term.replace('"', '""') + '"' + ("*" if prefix else "")


def idf(total: int, hits: int | float) -> float:
    return math.log(1 + (total - hits + 0.5) / (hits + 0.5))


def _fts_idf(total: int, hits: int) -> float:
    value = math.log((total - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


def _plain(conn: sqlite3.Connection) -> sqlite3.Cursor:
    cursor = conn.cursor()
    cursor.row_factory = None  # tuples: thousands of rows come back
    return cursor


def _keyword_rowids(conn: sqlite3.Connection, term: str) -> set[int]:
    """The memories whose body repeats a term (`KEYWORD_MIN_COUNT`, `KEYWORD_DENSITY`)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_vocab USING fts5vocab(main, memories_fts, instance)")
    return {doc for (doc,) in _plain(conn).execute(KEYWORD_SQL, (term, KEYWORD_MIN_COUNT, KEYWORD_DENSITY))}


def _rowids(conn: sqlite3.Connection, match: str) -> set[int]:
    # One string instead of a row per match: a word can be in most memories.
    (joined,) = _plain(conn).execute(
        "SELECT group_concat(rowid) FROM memories_fts WHERE memories_fts MATCH ?", (match,)
    ).fetchone()
    return _rowid_set(joined)


def _rowid_set(joined: str | None) -> set[int]:
    """The rowids of a ``group_concat(rowid)``: one string instead of a row per memory."""
    return set(map(int, joined.split(","))) if joined else set()
