"""Read flow, steps 2-4: anchors, BM25 ranking with multipliers, visibility, refinement.

Scores come from FTS5 ``bm25()`` with column weights, one query per term.
FTS5 clamps the IDF of a term found in half the rows or more to 1e-6,
which makes small folders rank by noise; the per-term BM25 is therefore
divided by FTS5's own IDF and multiplied by an unclamped one, which keeps
FTS5's weighted term-frequency and length normalisation. Stdlib only.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from . import terms
from .layers import Layer

# Column weights, in FTS column order: id, tags, directive, summary, triggers, body, paths.
COLUMN_WEIGHTS = (6.0, 5.0, 4.0, 2.5, 2.5, 1.0, 3.0)
FIELD_NAMES = ("id", "tags", "directive", "summary", "triggers", "body", "applies_to")
MULTIPLIERS = {"review_due": 0.7, "stale": 0.6, "medium": 0.9, "workspace": 1.1}
FETCH_BOOST_STEP = 0.05  # per earlier `load --id`, up to FETCH_BOOST_MAX
FETCH_BOOST_MAX = 1.2
SKILL_BOOST = 1.25  # `workflow` in the query routes to skill memories
RELATED_BOOST = 0.1  # times the tag overlap with the best hit
MANY_ANCHORS = 4
MIN_COVERAGE = 0.6  # share of the query's anchor weight a pack member must match
MIN_STRONG_COVERAGE = 0.45  # ... or this share matched in strong fields (id, tags, directive, paths)
MIN_RELATIVE = 0.6  # score relative to the best hit, below which a candidate stays out
SPECIFIC_SHARE = 0.15  # a strong-field hit on a word at most this share of memories have ...
MIN_SPECIFIC_COVERAGE = 0.35  # ... is enough with this share of the query's weight
ABSENT_WEIGHT = 1.0  # a word no memory has weighs at most this times the mean of the words found
MEMORY_COLUMNS = (
    "rowid, id, rel, type, authority, confidence, lifecycle, level, valid_until, roles, tags, directive,"
    " summary, title, applies_to, depends_on, tokens, strong, ignored, safety, source_sha256"
)


@dataclass(frozen=True)
class Anchor:
    word: terms.Word

    @property
    def text(self) -> str:
        return self.word.text

    @property
    def is_type_word(self) -> bool:
        return self.word.text in terms.TYPE_WORDS


def anchors_of(query: str) -> list[Anchor]:
    """The meaningful query words: no stopwords, no generic memory words, no repeats."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for word in map(terms.meaningful, terms.words(query)):
        if word is None or word.terms in seen:
            continue
        seen.add(word.terms)
        out.append(Anchor(word))
    return out


@dataclass
class Candidate:
    layer: Layer
    row: sqlite3.Row
    raw: float = 0.0
    score: float = 0.0
    anchors_hit: list[Anchor] = field(default_factory=list)
    strong_hit: bool = False
    coverage: float = 0.0
    strong_coverage: float = 0.0
    specific: bool = False  # a strong-field hit on a rare word
    multipliers: list[tuple[str, float]] = field(default_factory=list)
    reason: str | None = None  # omission reason, one word
    stale: bool = False
    prerequisite_of: str | None = None  # set when pulled in by a dependent's depends_on
    focused: bool = False  # close to the best hit and covering the query (refinement)

    @property
    def id(self) -> str:
        return self.row["id"]

    @property
    def scope(self) -> str:
        return self.layer.scope

    @property
    def key(self) -> str:
        return f"{self.scope}:{self.id}"

    @property
    def tags(self) -> list[str]:
        return json.loads(self.row["tags"])

    def matched_fields(self) -> dict[str, list[str]]:
        """For each anchor hit, the fields it hit (computed on demand, for dry-run reasons)."""
        fields = _field_terms(self.row, self.layer)
        out = {}
        for anchor in self.anchors_hit:
            names = [name for name, found in fields.items() if set(anchor.word.terms) & found]
            out[anchor.text] = names or ["body"]
        return out


def _field_terms(row: sqlite3.Row, layer: Layer) -> dict[str, set[str]]:
    full = layer.conn.execute("SELECT summary, body, triggers FROM memories WHERE rowid = ?", (row["rowid"],)).fetchone()
    return {
        "id": terms.term_set(row["id"]),
        "tags": terms.term_set(" ".join(json.loads(row["tags"]))),
        "directive": terms.term_set(row["directive"]),
        "summary": terms.term_set(full["summary"]),
        "triggers": terms.term_set(" ".join(json.loads(full["triggers"]))),
        "body": terms.term_set(full["body"]),
        "applies_to": terms.term_set(" ".join(json.loads(row["applies_to"]))),
    }


@dataclass
class Options:
    limit: int = 8
    roles: tuple[str, ...] = ()
    include_low: bool = False  # --all shows low-confidence memories
    everything: bool = False  # --all: every visible routed match, no refinement and no cap
    fetch_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    today: str = field(default_factory=lambda: date.today().isoformat())


@dataclass
class Routing:
    anchors: list[Anchor]
    admitted: list[Candidate]  # passed visibility, lifecycle and the anchor rule, ranked
    pack: list[Candidate]  # the refined compact selection, ranked
    omitted: list[Candidate]  # with their reason
    narrow_tags: list[str]

    @property
    def total_related(self) -> int:
        return len(self.admitted)


# --- scoring ---------------------------------------------------------------------------------


def _fts_query(term: str, prefix: bool) -> str:
    return '"' + term.replace('"', '""') + '"' + ("*" if prefix else "")


def _doc_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]


def _idf(total: int, hits: int) -> float:
    return math.log(1 + (total - hits + 0.5) / (hits + 0.5))


def _fts_idf(total: int, hits: int) -> float:
    value = math.log((total - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


def _term_hits(conn: sqlite3.Connection, term: str, prefix: bool) -> list[tuple[int, float]]:
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    return conn.execute(
        f"SELECT rowid, bm25(memories_fts, {weights}) FROM memories_fts WHERE memories_fts MATCH ?",
        (_fts_query(term, prefix),),
    ).fetchall()


@dataclass
class _Scored:
    raw: dict[int, float] = field(default_factory=dict)
    hit_anchors: dict[int, set[int]] = field(default_factory=dict)  # rowid -> indexes of the anchors it has
    anchor_weight: dict[str, float] = field(default_factory=dict)
    specific_weight: float = 0.0  # the weight of a word found in SPECIFIC_SHARE of the memories


def _score_layer(layer: Layer, anchors: list[Anchor]) -> _Scored:
    scored = _Scored()
    total = _doc_count(layer.conn)
    scored.specific_weight = _idf(total, max(1.0, SPECIFIC_SHARE * total))
    absent = []
    for index, anchor in enumerate(anchors):
        weights, found = [], False
        for term in anchor.word.terms:
            rows = _term_hits(layer.conn, term, anchor.word.prefix)
            idf = _idf(total, len(rows))
            weights.append(idf)
            found = found or bool(rows)
            fts_idf = _fts_idf(total, len(rows))
            for rowid, bm25 in rows:
                scored.raw[rowid] = scored.raw.get(rowid, 0.0) + idf * (-bm25 / fts_idf)
                scored.hit_anchors.setdefault(rowid, set()).add(index)
        scored.anchor_weight[anchor.text] = sum(weights) / len(weights)
        if not found:
            absent.append(anchor.text)
    _cap_absent(scored.anchor_weight, absent)
    return scored


def _cap_absent(weights: dict[str, float], absent: list[str]) -> None:
    """Words no memory contains still count against coverage, but no more than a typical found word."""
    found = [w for a, w in weights.items() if a not in absent]
    if not found:
        return
    cap = ABSENT_WEIGHT * sum(found) / len(found)
    for anchor in absent:
        weights[anchor] = min(weights[anchor], cap)


def _rows(conn: sqlite3.Connection, rowids: list[int]) -> list[sqlite3.Row]:
    conn.row_factory = sqlite3.Row
    out: list[sqlite3.Row] = []
    for start in range(0, len(rowids), 900):
        chunk = rowids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        out += conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE rowid IN ({marks})", chunk).fetchall()
    return out


def _anchor_hit(anchor: Anchor, found: set[str]) -> bool:
    """Whether a set of terms (a memory's strong fields) has the word.

    A CJK word hits when any of its bigrams does (users split words differently).
    """
    word_terms = anchor.word.terms
    if anchor.word.prefix:
        return any(t.startswith(word_terms[0]) for t in found)
    return any(t in found for t in word_terms)


# --- visibility --------------------------------------------------------------------------------


def visibility_reason(row: sqlite3.Row, options: Options) -> str | None:
    """Why a memory is hidden from a normal load, or None when it is visible."""
    if row["ignored"]:
        return "ignored"
    if options.roles and row["roles"] != "[]" and not set(json.loads(row["roles"])) & set(options.roles):
        return "role"
    if row["lifecycle"] in ("archived", "superseded"):
        return "lifecycle"
    if row["valid_until"] and row["valid_until"] < options.today:
        return "lifecycle"
    if row["confidence"] == "low" and not options.include_low:
        return "confidence"
    return None


def visible_candidates(layers: list[Layer], where: str, options: Options) -> list[Candidate]:
    """Visible memories matching an SQL condition; a workspace id hides the global one."""
    shadowed: set[str] = set()
    out = []
    for layer in layers:
        layer.conn.row_factory = sqlite3.Row
        for row in layer.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where}"):
            if row["id"] in shadowed or visibility_reason(row, options) is not None:
                continue
            cand = Candidate(layer, row)
            cand.stale = layer.is_stale(row["rel"], row["source_sha256"])
            out.append(cand)
        shadowed |= {r[0] for r in layer.conn.execute("SELECT id FROM memories")}
    return out


def _multipliers(cand: Candidate, options: Options, skill_query: bool) -> list[tuple[str, float]]:
    row = cand.row
    out = []
    if row["lifecycle"] == "review_due":
        out.append(("review_due", MULTIPLIERS["review_due"]))
    if cand.stale:
        out.append(("stale", MULTIPLIERS["stale"]))
    if row["confidence"] == "medium":
        out.append(("medium", MULTIPLIERS["medium"]))
    if cand.scope == "workspace":
        out.append(("workspace", MULTIPLIERS["workspace"]))
    fetched = options.fetch_counts.get((cand.scope, cand.id), 0)
    if fetched:
        out.append(("fetched", min(FETCH_BOOST_MAX, 1 + FETCH_BOOST_STEP * fetched)))
    if skill_query and row["type"] == "skill":
        out.append(("workflow", SKILL_BOOST))
    return out


# --- routing ---------------------------------------------------------------------------------


def route(layers: list[Layer], query: str, options: Options) -> Routing:
    anchors = anchors_of(query)
    routing = Routing(anchors, [], [], [], [])
    scoring = [a for a in anchors if not a.is_type_word] or []
    if not scoring:
        return routing  # no anchors, or only a type word: never a broad match
    skill_query = len(scoring) < len(anchors)
    candidates = _candidates(layers, anchors, options, skill_query)
    for cand in candidates:
        if cand.reason is None:
            routing.admitted.append(cand)
        else:
            routing.omitted.append(cand)
    _rank(routing.admitted)
    _rerank_related(routing.admitted)
    _refine(routing, options)
    return routing


def _candidates(layers: list[Layer], anchors: list[Anchor], options: Options, skill_query: bool) -> list[Candidate]:
    shadowed: set[str] = set()
    out = []
    for layer in layers:
        scored = _score_layer(layer, anchors)
        total_weight = sum(scored.anchor_weight[a.text] for a in anchors if not a.is_type_word)
        for row in _rows(layer.conn, list(scored.raw)):
            if row["id"] in shadowed:
                continue  # the workspace copy of an id wins over the global one
            cand = Candidate(layer, row, raw=scored.raw[row["rowid"]])
            # any bigram of a CJK word, like a Latin word's one term, makes a hit
            cand.anchors_hit = [anchors[i] for i in sorted(scored.hit_anchors[row["rowid"]])]
            _judge(cand, anchors, scored, total_weight, options, skill_query)
            out.append(cand)
        shadowed |= {r[0] for r in layer.conn.execute("SELECT id FROM memories")}
    return out


def _judge(
    cand: Candidate, anchors: list[Anchor], scored: _Scored, total_weight: float, options: Options, skill_query: bool
) -> None:
    content_hits = [a for a in cand.anchors_hit if not a.is_type_word]
    strong_text = cand.row["strong"]
    strong = set(strong_text.split()) if any(t in strong_text for a in content_hits for t in a.word.terms) else set()
    strong_hits = [a for a in content_hits if _anchor_hit(a, strong)] if strong else []
    cand.strong_hit = bool(strong_hits)
    cand.specific = any(scored.anchor_weight[a.text] >= scored.specific_weight for a in strong_hits)
    if total_weight:
        cand.coverage = sum(scored.anchor_weight[a.text] for a in content_hits) / total_weight
        cand.strong_coverage = sum(scored.anchor_weight[a.text] for a in strong_hits) / total_weight
    cand.reason = visibility_reason(cand.row, options)
    if cand.reason is None and not _passes_anchor_rule(anchors, content_hits, cand.strong_hit):
        cand.reason = "anchors"
    cand.stale = cand.layer.is_stale(cand.row["rel"], cand.row["source_sha256"])
    cand.multipliers = _multipliers(cand, options, skill_query)
    cand.score = cand.raw * math.prod(f for _, f in cand.multipliers)


def _passes_anchor_rule(anchors: list[Anchor], content_hits: list[Anchor], strong_hit: bool) -> bool:
    """Four or more anchors need two anchor hits, or one hit in a strong field."""
    if not content_hits:
        return False
    if len(anchors) >= MANY_ANCHORS:
        return len(content_hits) >= 2 or strong_hit
    return True


def _rank_key(cand: Candidate) -> tuple:
    return (-cand.score, cand.scope != "workspace", cand.id)


def _rank(cands: list[Candidate]) -> None:
    cands.sort(key=_rank_key)


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
        routing.narrow_tags = narrow_tags(routing)
        return
    best = routing.admitted[0].score
    for cand in routing.admitted:
        covers = (
            cand.coverage >= MIN_COVERAGE
            or cand.strong_coverage >= MIN_STRONG_COVERAGE
            or (cand.specific and cand.coverage >= MIN_SPECIFIC_COVERAGE)
        )
        cand.focused = covers and cand.score >= MIN_RELATIVE * best
        if cand.focused and len(routing.pack) < options.limit:
            routing.pack.append(cand)
        else:
            cand.reason = "limit"
            routing.omitted.append(cand)
    routing.narrow_tags = narrow_tags(routing)


def narrow_tags(routing: Routing, count: int = 5) -> list[str]:
    """Tags that best split the related candidates: frequent, but not in all of them."""
    words = {t for a in routing.anchors for t in a.word.terms}
    tally = Counter(t for c in routing.admitted for t in set(c.tags))
    tally = Counter({t: n for t, n in tally.items() if not terms.term_set(t) <= words})
    size = len(routing.admitted)
    ranked = sorted(
        (t for t, n in tally.items() if n < size or size == 1),
        key=lambda t: (abs(tally[t] - size / 2), -tally[t], t),
    )
    return ranked[:count]
