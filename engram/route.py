"""Read flow, steps 2 and 4: anchors, ranking across layers, visibility, refinement.

``match`` judges and scores each layer's matching memories; here the best
``WINDOW`` of them become candidates, are ranked across layers, reranked by
related edges and refined into the pack. `total related` is a count: a word
found in thousands of memories costs no thousands of Python objects. Stdlib only.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter

from . import terms
from .layers import Layer
from .match import HIDDEN_SQL, Group, LayerMatch, Scored, Verdict, match_layer

RELATED_BOOST = 0.1  # times the tag overlap with the best hit
# A query's first words up to this many are its anchors. A pasted log or file is no task
# description, and judging memories costs time per anchor and per distinct pattern of hits
# (a 10 KB prompt with 600 distinct words took 15 s at 10,000 memories).
MAX_ANCHORS = 32
# Score relative to the best hit, below which a candidate stays out. Only memories that cover
# the query (`Verdict.covers`) are scored, so the best hit is the best covering one.
MIN_RELATIVE = 0.6
# Candidates ranked, reranked and listed in Python; the rest are only counted. Far above any
# pack (load.limit <= 32), so the pack is the one a full ranking would give.
WINDOW = 128
MEMORY_FIELDS = (
    "rowid", "id", "rel", "type", "authority", "confidence", "lifecycle", "level", "valid_until", "roles", "tags",
    "directive", "summary", "title", "applies_to", "depends_on", "tokens", "ignored", "safety", "source_sha256",
)  # fmt: skip
MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in MEMORY_FIELDS)
STRONG_FIELDS = ("id", "tags", "directive", "applies_to")  # match.STRONG_COLUMNS, as dry-run names them


class Anchor:
    __slots__ = ("word", "joined", "pair")

    def __init__(self, word: terms.Word, joined: tuple[str, ...] = (), pair: bool = False) -> None:
        self.word = word
        # The anchor glued to the query word before or after it (`spring boot` -> `springboot`),
        # as a name is often written in an id or tag; matched in strong fields only, where such
        # a name is the memory's subject (a body's `ApolloClient` is incidental). A memory holding
        # the name holds each of its words.
        self.joined = joined
        # A name written in two query words (`styled-components`, `spring boot`), an anchor of its
        # own: found in strong fields only (as one glued term), it weighs what the name weighs,
        # not what its two common words do.
        self.pair = pair

    @property
    def text(self) -> str:
        return self.word.text

    @property
    def is_type_word(self) -> bool:
        return self.word.text in terms.TYPE_WORDS

    def found_in(self, field: str, field_terms: set[str]) -> bool:
        """Whether the anchor hits a field of a memory, given the field's terms."""
        if field in STRONG_FIELDS:
            return not field_terms.isdisjoint(self.word.terms + self.joined)
        return not self.pair and not field_terms.isdisjoint(self.word.terms)


def anchors_of(query: str) -> tuple[list[Anchor], int]:
    """The meaningful query words (no stopwords, no generic memory words, no repeats), the first
    MAX_ANCHORS of them, then the two-word names they form (`Anchor.pair`); and how many later
    meaningful words were left out."""
    seen: set[tuple[str, ...]] = set()
    words = []
    written = terms.words(query)
    found = list(map(terms.meaningful, written))
    glued = _glued_pairs(written, found)
    for position, word in enumerate(found):
        if word is None or word.terms in seen:
            continue
        seen.add(word.terms)
        joined = (glued.get(position - 1), glued.get(position))
        words.append(Anchor(word, tuple(term for term in joined if term and term not in word.terms)))
    anchors, unused = words[:MAX_ANCHORS], len(words) - MAX_ANCHORS
    kept = {anchor.word.terms for anchor in anchors}
    for position, term in glued.items():
        first, second = found[position], found[position + 1]  # second: None for a number
        if (term,) not in seen and first.terms in kept and (second is None or second.terms in kept):
            seen.add((term,))
            name = terms.Word(f"{first.text}-{written[position + 1].text}", (term,), False)
            anchors.append(Anchor(name, pair=True))
    return anchors, max(0, unused)


def _glued_pairs(written: list[terms.Word], found: list[terms.Word | None]) -> dict[int, str]:
    """For an anchor made of letters and the next word, the term of both glued, by the first one's
    position: the next word is an anchor made of letters ("spring boot" -> springboot), or a
    number, which may be too short to be an anchor ("vue 3" -> vue3). A stopword between them
    breaks the pair: "spring of boot" glues nothing."""
    out = {}
    for position, (first, second) in enumerate(zip(found, written[1:])):
        if first and (found[position + 1] or second.text.isdigit()) and (term := terms.glue(first, second)):
            out[position] = term
    return out


class Candidate:
    """A memory on its way into a pack: its row, and how it was judged."""

    __slots__ = (
        "layer", "row", "score", "anchors_hit", "verdict", "multipliers", "reason", "stale", "prerequisite_of",
        "focused",
    )  # fmt: skip

    def __init__(self, layer: Layer, row: sqlite3.Row, reason: str | None = None) -> None:
        self.layer = layer
        self.row = row
        self.score = 0.0
        self.anchors_hit: list[Anchor] = []
        self.verdict: Verdict | None = None  # how its anchor hits fared; None when fetched by id, tag or path
        self.multipliers: list[tuple[str, float]] = []
        self.reason = reason  # omission reason, one word
        self.stale = False
        self.prerequisite_of: str | None = None  # set when pulled in by a dependent's depends_on
        self.focused = False  # close to the best hit and covering the query (refinement)

    @property
    def id(self) -> str:
        return self.row["id"]

    @property
    def coverage(self) -> float:
        return self.verdict.coverage if self.verdict else 0.0

    @property
    def covers(self) -> bool:
        """Focused enough on the query to pack (`Verdict.covers`)."""
        return bool(self.verdict and self.verdict.covers)

    @property
    def scope(self) -> str:
        return self.layer.scope

    @property
    def key(self) -> str:
        return f"{self.scope}:{self.id}"

    @property
    def tags(self) -> list[str]:
        return json.loads(self.row["tags"])

    @property
    def subjects(self) -> list[str]:
        """The query's subjects that make this memory cover the query (`match.Plan.find_subjects`)."""
        if self.verdict is None or not self.verdict.subject_mask:
            return []
        mask = self.verdict.subject_mask
        return [anchor.text for index, anchor in zip(self.verdict.anchors, self.anchors_hit) if mask >> index & 1]

    def matched_fields(self) -> dict[str, list[str]]:
        """For each anchor hit, the fields it hit (computed on demand, for dry-run reasons);
        a body that repeats the anchor as a keyword (`match.KEYWORD_SHARE`) says so."""
        fields = _field_terms(self.row, self.layer)
        hit, repeated = (self.verdict.anchors, set(self.verdict.keywords)) if self.verdict else ([], set())
        out = {}
        for index, anchor in zip(hit, self.anchors_hit):
            names = [name for name, found in fields.items() if anchor.found_in(name, found)] or ["body"]
            out[anchor.text] = [f"{n} (repeated)" if n == "body" and index in repeated else n for n in names]
        return out


def _field_terms(row: sqlite3.Row, layer: Layer) -> dict[str, set[str]]:
    full = layer.conn.execute("SELECT summary, body, triggers FROM memories WHERE rowid = ?", (row["rowid"],)).fetchone()
    return {
        "id": set(terms.name_terms([row["id"]]).split()),
        "tags": set(terms.name_terms(json.loads(row["tags"])).split()),
        "directive": terms.term_set(row["directive"]),
        "summary": terms.term_set(full["summary"]),
        "triggers": terms.term_set(" ".join(json.loads(full["triggers"]))),
        "body": terms.term_set(full["body"]),
        "applies_to": terms.term_set(" ".join(json.loads(row["applies_to"]))),
    }


class Options:
    __slots__ = ("limit", "roles", "include_low", "everything", "explain", "fetch_counts", "today")

    def __init__(
        self,
        limit: int = 8,
        roles: tuple[str, ...] = (),
        include_low: bool = False,
        everything: bool = False,
        explain: bool = False,
        fetch_counts: dict[tuple[str, str], int] | None = None,
        today: str | None = None,
    ) -> None:
        self.limit = limit
        self.roles = roles
        self.include_low = include_low  # --all and --id show low-confidence memories
        self.everything = everything  # --all: every visible routed match, no refinement and no cap
        self.explain = explain  # dry-run and JSON: list omitted candidates and narrowing tags
        self.fetch_counts = fetch_counts or {}
        self.today = today or time.strftime("%Y-%m-%d")  # local date, as date.today() gives

    def visibility_params(self) -> dict[str, object]:
        return {"roles": json.dumps(list(self.roles)), "today": self.today, "include_low": self.include_low}


class Routing:
    def __init__(self, anchors: list[Anchor], admitted: list[Candidate], pack: list[Candidate]) -> None:
        self.anchors = anchors
        self.unused_words = 0  # meaningful query words past MAX_ANCHORS
        self.admitted = admitted  # passed visibility, lifecycle and the anchor rule, ranked (the best WINDOW)
        self.pack = pack  # the refined compact selection, ranked
        self.total_related = len(admitted)  # route() counts past the window
        self.omitted: list[Candidate] = []  # with their reason (listed with Options.explain)
        self.unlisted = 0  # candidates omitted but not listed (beyond the window)
        self.narrow_tags: list[str] = []


# --- visibility --------------------------------------------------------------------------------


def visible_candidates(layers: list[Layer], where: str, options: Options, params: dict | None = None) -> list[Candidate]:
    """Visible memories matching an SQL condition on ``m`` (memories); a workspace id hides the global one."""
    out = []
    for layer in layers:
        layer.conn.row_factory = sqlite3.Row
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE ({where}) AND ({HIDDEN_SQL}) IS NULL"
        for row in layer.conn.execute(sql, {**options.visibility_params(), **(params or {})}):
            if row["rowid"] not in layer.shadowed:
                out.append(_candidate(layer, row))
    return out


def candidate_by_id(layer: Layer, memory_id: str, options: Options) -> Candidate | None:
    """One memory by id, with its visibility as ``reason`` (None when visible)."""
    layer.conn.row_factory = sqlite3.Row
    row = layer.conn.execute(
        f"SELECT {MEMORY_COLUMNS}, {HIDDEN_SQL} AS hidden FROM memories AS m WHERE m.id = :id",
        {"id": memory_id, **options.visibility_params()},
    ).fetchone()
    return None if row is None else _candidate(layer, row, reason=row["hidden"])


def _candidate(layer: Layer, row: sqlite3.Row, verdict: Verdict | None = None, reason: str | None = None) -> Candidate:
    cand = Candidate(layer, row, reason)
    cand.stale = layer.is_stale(row["rel"], row["source_sha256"])
    cand.verdict = verdict
    return cand


def _rows(layer: Layer, rowids: list[int]) -> dict[int, sqlite3.Row]:
    rows = _in_chunks(layer, f"SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.rowid IN ({{}})", rowids)
    return {row["rowid"]: row for row in rows}


def _in_chunks(layer: Layer, sql: str, rowids: list[int]) -> list[sqlite3.Row]:
    """Rows of an ``IN ({})`` query over any number of rowids (SQLite caps bound parameters)."""
    layer.conn.row_factory = sqlite3.Row
    out: list[sqlite3.Row] = []
    for start in range(0, len(rowids), 900):
        chunk = rowids[start : start + 900]
        out += layer.conn.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
    return out


# --- routing -----------------------------------------------------------------------------------


def route(layers: list[Layer], query: str, options: Options) -> Routing:
    anchors, unused_words = anchors_of(query)
    routing = Routing(anchors, [], [])
    routing.unused_words = unused_words
    scoring = [a for a in anchors if not a.is_type_word]
    if not scoring:
        return routing  # no anchors, or only a type word: never a broad match
    skill_query = len(scoring) < len(anchors)
    found = [m for layer in layers if (m := match_layer(layer, anchors, options, skill_query, options.everything))]
    routing.total_related = sum(m.admitted_count for m in found)
    # a two-word name no memory has is no anchor worth listing: most adjacent words form none
    routing.anchors = [a for i, a in enumerate(anchors) if not a.pair or any(m.found_mask >> i & 1 for m in found)]
    routing.admitted = _ranked_window(found, anchors, None if options.everything else WINDOW)
    _rerank_related(routing.admitted)
    _refine(routing, options)
    if options.explain:
        _explain(routing, found, anchors)
    return routing


def _ranked_window(found: list[LayerMatch], anchors: list[Anchor], size: int | None) -> list[Candidate]:
    """The best admitted candidates: scored ones by score, then unscored ones by coverage."""
    scored = sorted(((m, s) for m in found for s in m.scored), key=lambda e: _order(e[1].score, e[0], e[1].id))
    picks: list[Pick] = [(m, s.rid, s.verdict, s) for m, s in scored[:size]]
    room = None if size is None else size - len(picks)
    if room is None or room > 0:
        unscored = [(m, group) for m in found for group in m.unscored]
        picks += [(m, rowid, group.verdict, None) for m, group, rowid in _best_by_coverage(unscored, room)]
    return _candidates(picks, anchors)


def _best_by_coverage(groups: list[tuple[LayerMatch, Group]], size: int | None) -> list[tuple[LayerMatch, Group, int]]:
    """The best ``size`` memories of some groups (with their layer's match), by coverage.

    Only groups down to the coverage of the last one needed are spread into memories.
    """
    groups = sorted(groups, key=lambda e: -e[1].verdict.coverage)
    taken: list[tuple[LayerMatch, Group]] = []
    count = 0
    for m, group in groups:
        if size is not None and count >= size and group.verdict.coverage < taken[-1][1].verdict.coverage:
            break
        taken.append((m, group))
        count += len(group.rowids)
    spread = [(m, group, rowid) for m, group in taken for rowid in group.rowids]
    return sorted(spread, key=lambda e: _order(e[1].verdict.coverage, e[0], e[2]))[:size]


# (layer match, rowid, verdict, its score if scored) of a memory chosen for the window
Pick = tuple[LayerMatch, int, Verdict, "Scored | None"]


def _order(value: float, found: LayerMatch, tiebreak: object) -> tuple:
    return (-value, found.layer.scope != "workspace", tiebreak)


def _candidates(picks: list[Pick], anchors: list[Anchor]) -> list[Candidate]:
    """Candidates for picks, in pick order, with one row query per layer."""
    rows: dict[int, dict[int, sqlite3.Row]] = {}
    for m in {id(m): m for m, *_ in picks}.values():
        rows[id(m)] = _rows(m.layer, [rowid for pm, rowid, *_ in picks if pm is m])
    out = []
    for m, rowid, verdict, scored in picks:
        cand = _candidate(m.layer, rows[id(m)][rowid], verdict)
        cand.anchors_hit = [anchors[i] for i in verdict.anchors]
        if scored is not None:
            cand.score, cand.multipliers, cand.stale = scored.score, scored.multipliers[:], scored.stale
        out.append(cand)
    return out


def _rank_key(cand: Candidate) -> tuple:
    return (-cand.score, -cand.coverage, cand.scope != "workspace", cand.id)


def _rerank_related(admitted: list[Candidate]) -> None:
    """A small boost for candidates related (shared tags) to the best hit.

    Only memories that already matched the query are touched: a related edge never admits one.
    """
    if len(admitted) < 2:
        return
    best = admitted[0]
    weights = dict(
        best.layer.conn.execute("SELECT dst, weight FROM edges WHERE src = ? AND kind = 'related'", (best.id,)).fetchall()
    )
    for cand in admitted[1:]:
        if cand.layer is best.layer and cand.id in weights:
            factor = 1 + RELATED_BOOST * weights[cand.id]
            cand.multipliers.append(("related", round(factor, 3)))
            cand.score = min(cand.score * factor, best.score)  # never above the hit that relates it
    admitted[1:] = sorted(admitted[1:], key=_rank_key)


def _refine(routing: Routing, options: Options) -> None:
    """Keep what is close to the best hit and covers the query; cap at the load limit."""
    if not routing.admitted:
        return
    if options.everything:
        routing.pack = routing.admitted[:]
        return
    best = routing.admitted[0].score
    for cand in routing.admitted:
        cand.focused = cand.covers and cand.score >= MIN_RELATIVE * best
        if cand.focused and len(routing.pack) < options.limit:
            routing.pack.append(cand)
        else:
            cand.reason = "limit"


def _explain(routing: Routing, found: list[LayerMatch], anchors: list[Anchor]) -> None:
    """The omitted candidates worth listing, how many more there are, and tags to narrow with."""
    packed = {c.key for c in routing.pack}
    cut = [c for c in routing.admitted if c.key not in packed]
    pool = _best_by_coverage([(m, group) for m in found for group in m.omitted], WINDOW)
    hidden = _candidates([(m, rowid, group.verdict, None) for m, group, rowid in pool], anchors)
    for cand, (_, group, _) in zip(hidden, pool):
        cand.reason = group.reason
    routing.omitted = cut + hidden
    omitted_total = sum(m.omitted_count for m in found)
    routing.unlisted = routing.total_related - len(routing.admitted) + omitted_total - len(hidden)
    tally: Counter = Counter()
    for m in found:
        for (tags,) in _in_chunks(m.layer, "SELECT m.tags FROM memories AS m WHERE m.rowid IN ({})", m.admitted()):
            tally.update(set(json.loads(tags)))
    routing.narrow_tags = narrow_tags(routing.anchors, tally, routing.total_related)


def narrow_tags(anchors: list[Anchor], tally: Counter, size: int, count: int = 5) -> list[str]:
    """Tags that best split the related candidates: frequent, but not in all of them, and able to
    narrow a query (a tag made only of stopwords or generic memory words would be no anchor)."""
    words = {t for a in anchors for t in a.word.terms}
    useful = {
        t: n
        for t, n in tally.items()
        if not terms.term_set(t) <= words and (n < size or size == 1) and any(map(terms.meaningful, terms.words(t)))
    }
    return sorted(useful, key=lambda t: (abs(useful[t] - size / 2), -useful[t], t))[:count]
