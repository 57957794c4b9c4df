"""Read flow, step 3: judge the memories of one index that a query's anchors reach.

`evidence` gathers what each memory holds; here each one is checked for
visibility (the one rule of ``HIDDEN_SQL``) and the spec's anchor rule, the
best `evidence.WINDOW` of the rest are scored (BM25F), judged by the fitted
`relevance` model and multiplied by the spec's multipliers. Memories past the
window are only counted: a word found in thousands of them costs no thousands
of Python objects. Stdlib only.
"""

from __future__ import annotations

import json
import math
import sqlite3

from . import exported, relevance
from .evidence import Evidence, Found
from .index import HIDDEN_SQL, MAY_BE_HIDDEN, tuple_cursor
from .reads import Reads

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .layers import Layer
    from .route import Anchor, Options

MULTIPLIERS = {"review_due": 0.7, "stale": 0.6, "medium": 0.9, "workspace": 1.1}
FETCH_BOOST_STEP = 0.05  # per earlier `load --id`, up to FETCH_BOOST_MAX
FETCH_BOOST_MAX = 1.2
SKILL_BOOST = 1.25  # `workflow` in the query routes to skill memories
MANY_ANCHORS = 4  # the anchor rule: a query with this many words needs two hits or a strong one
EVERYDAY_NAME_WORDS = 2  # the Latin words of a stack's name in everyday foreign text ("Taylor Swift" at most)

HIDDEN_ROWS_SQL = (  # read from the partial index of the memories that may be hidden alone
    f"SELECT m.rowid, {HIDDEN_SQL} AS hidden FROM memories AS m WHERE ({MAY_BE_HIDDEN}) AND hidden IS NOT NULL"
)
FACTS_SQL = (
    "SELECT rowid, id, lifecycle, confidence, type, rel, source_sha256, name_terms FROM memories WHERE rowid IN ({})"
)


class Judged:
    """A memory of one index that may pack: its evidence, features, relevance and score."""

    __slots__ = ("rowid", "id", "found", "features", "relevance", "multipliers", "score", "stale", "clause")

    def __init__(self, found: Found, features: dict[str, float], model: relevance.Model) -> None:
        self.rowid = found.rowid
        self.id = ""
        self.found = found
        self.features = features
        self.relevance = model.candidate_relevance(features)
        self.multipliers: list[tuple[str, float]] = []
        self.score = self.relevance
        self.stale = False
        self.clause = 0.0  # its relevance to the clause it leads, in a task of several (`judge_clauses`)

    @property
    def factor(self) -> float:
        """The product of its multipliers."""
        return math.prod(factor for _, factor in self.multipliers)

    @property
    def clause_score(self) -> float:
        return self.clause * self.factor

    def rescore(self, relevance: float) -> None:
        """Set the relevance (a model's, or another one's when fitting) and the score it gives."""
        self.relevance = relevance
        self.score = relevance * self.factor


class LayerMatch:
    """What routing needs from one index: the judged candidates, and the rest as counts and reasons."""

    def __init__(self, layer: Layer, evidence: Evidence) -> None:
        self.layer = layer
        self.evidence = evidence
        self.judged: list[Judged] = []  # the admitted within the window, in BM25F order
        self.admitted_count = 0  # visible and passing the anchor rule, window or not
        self.admitted_rowids: list[int] = []
        self.omitted: dict[str, set[int]] = {}  # reason -> rowids (hidden, or failing the anchor rule)
        self.unknown: set[int] = set()  # the query's words of letters no memory holds
        self.everyday = False  # the task's foreign words are everyday text this index does not speak
        self.strong: set[int] = set()  # the anchors some memory holds in a strong field


def match_layer(
    layer: Layer,
    anchors: list[Anchor],
    options: Options,
    skill_query: bool,
    everything: bool = False,
    clauses: Clauses = ((), frozenset()),
) -> LayerMatch | None:
    """Judge the layer's memories the anchors reach (the best `evidence.WINDOW`, or all of them
    with ``everything``), and against each clause of a task of several (`judge_clauses`); None
    when no anchor is in this index."""
    evidence = Evidence(layer.reads, anchors)
    if not evidence.reached:
        return None
    found = LayerMatch(layer, evidence)
    hidden = _hidden_by_reason(layer.reads, options)
    out_of_sight = layer.shadowed.union(*hidden.values())  # the workspace copy of an id wins over the global one
    many = sum(not a.pair for a in anchors) >= MANY_ANCHORS
    reached = evidence.reached
    for reason, rowids in hidden.items():  # a shadowed memory is no candidate at all: its workspace copy is
        if held := rowids.intersection(reached):
            found.omitted[reason] = held
    # Set operations and one comprehension: at 100,000 memories a task reaches tens of thousands.
    found.admitted_rowids = [
        rowid for rowid in reached
        if rowid not in out_of_sight and (not many or evidence.passes_anchor_rule(rowid))
    ]  # fmt: skip
    if many and (failing := reached.keys() - out_of_sight - set(found.admitted_rowids)):
        found.omitted["anchors"] = failing
    found.admitted_count = len(found.admitted_rowids)
    window = found.admitted_rowids if everything else evidence.window(found.admitted_rowids)
    evidence.score(layer.conn, window)
    facts = _facts(layer.conn, window)
    window = [rowid for rowid in window if rowid in facts]  # a damaged shared file's full-text rows lack one
    ranked = sorted((evidence.found[r] for r in window), key=lambda f: (-f.bm25, facts[f.rowid][0]))
    named = _named(layer.conn, anchors, {f.rowid for f in ranked})
    names = {rowid: fact[-1] for rowid, fact in facts.items()}
    features = relevance.candidate_features(evidence, ranked, named, evidence.name_holders, names)
    found.judged = [Judged(f, values, options.model) for f, values in zip(ranked, features)]
    for j in found.judged:
        _apply_multipliers(layer, j, facts[j.rowid], options, skill_query)
    judge_clauses(found, ranked, clauses, (named, names), options.model)
    found.unknown, found.everyday = _unknown_words(evidence, anchors)
    found.strong = evidence.strong
    return found


# The clauses of a task (each the anchor indices it writes, `route.clauses_of`), and the anchors
# that name a technology.
Clauses = tuple[tuple[frozenset[int], ...], frozenset[int]]
CLAUSE_CANDIDATES = 16  # per clause, the memories holding most of it that are judged against it


def judge_clauses(
    found: LayerMatch, ranked: list[Found], clauses: Clauses, named_names: tuple, model: relevance.Model
) -> None:
    """In a task of several clauses ("refactor the Go worker pool and add Prometheus metrics"),
    each clause judged as if it were the task: the most relevant memory named or tagged for a
    technology the clause names gets that relevance as its `clause`. The whole task's words
    thin out each subject's share of them (the `go` rule judged 0.05 against the whole task,
    0.55 against its clause). Only a technology's memory: a clause's other words name subjects
    in passing (a sentence of a long report about "left" and "right" is no task about RTL)."""
    parts, technologies = clauses
    named, names = named_names
    judged = {j.rowid: j for j in found.judged}
    for clause in parts:
        named_for = sorted(clause & technologies)
        if not named_for:
            continue  # no memory can lead it
        evidence = found.evidence.restricted(clause)
        held = [f.restricted(clause) for f in ranked if clause & f.counts.keys()]
        held = sorted(held, key=lambda f: -f.bm25)[:CLAUSE_CANDIDATES]
        features = relevance.candidate_features(evidence, held, named, evidence.name_holders, names)
        leading = max(
            ((model.candidate_relevance(values), part.rowid) for part, values in zip(held, features)
             if part.names_any(named_for)),
            default=None,
        )  # fmt: skip
        if leading:
            j = judged[leading[1]]
            j.clause = max(j.clause, leading[0])


def _unknown_words(evidence: Evidence, anchors: list[Anchor]) -> tuple[set[int], bool]:
    """The query's words of letters (not numbers or codes) that no memory holds. An English folder
    holds no Chinese or Vietnamese word, so there such words (`Anchor.foreign`) count only in
    everyday text around a stack's name (a python in a zoo, Java on a café menu): none of them
    held or software writing (`devwords`), and no more Latin words than a name has; a developer's
    question holds either (and one with a word of software writing is routed without them,
    `route._english_alone`). A folder that holds half of them speaks the language: its Vietnamese
    words count as English ones do (CJK words, cut into fragments, never do there). And whether
    the task is such everyday text."""
    spoken = speaks([evidence.estimates[i] for i, a in enumerate(anchors) if a.foreign and not a.pair])
    everyday = not spoken and everyday_text(anchors)
    unknown = {
        i for i, a in enumerate(anchors)
        if not a.pair and a.word.text.isalpha() and not evidence.estimates[i]
        and (not a.foreign or everyday or (spoken and not a.word.cjk))
    }  # fmt: skip
    return unknown, everyday


def speaks(held: list[int]) -> bool:
    """Whether an index is written in the task's foreign language, from how many of its memories
    hold each of the task's foreign words: at least half of them held. One is no sign: a
    Vietnamese word folded to ASCII is often an English stem (`cách` -> `cach`, as `cache` is
    indexed)."""
    return bool(held) and 2 * sum(1 for count in held if count) >= len(held)


def everyday_text(anchors: list[Anchor]) -> bool:
    """Whether a task's foreign words (`Anchor.foreign`) are everyday text around a stack's name:
    none of them software writing, and no more Latin words than a name has."""
    foreign = [a for a in anchors if a.foreign]
    latin = sum(1 for a in anchors if not a.foreign and not a.pair)
    return bool(foreign) and latin <= EVERYDAY_NAME_WORDS and not any(a.software for a in foreign)


def _named(conn: sqlite3.Connection, anchors: list[Anchor], rowids: set[int]) -> set[int]:
    """The memories among ``rowids`` whose id is a query word or two-word name."""
    names = sorted({a.text for a in anchors})
    sql = f"SELECT rowid FROM memories WHERE id IN ({','.join('?' * len(names))})"
    return {rowid for (rowid,) in conn.execute(sql, names) if rowid in rowids} if names else set()


def _facts(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple]:
    """What judging needs of some memories: (id, lifecycle, confidence, type, rel, source digest,
    the id and tag terms as the index holds them)."""
    out = {}
    for start in range(0, len(rowids), 900):
        chunk = rowids[start : start + 900]
        for rowid, memory_id, *rest, name_terms in tuple_cursor(conn).execute(
            FACTS_SQL.format(",".join("?" * len(chunk))), chunk
        ):
            out[rowid] = (memory_id, *rest, set(name_terms.split()))
    return out


def _apply_multipliers(layer: Layer, j: Judged, facts: tuple, options: Options, skill_query: bool) -> None:
    memory_id, lifecycle, confidence, memory_type, rel, source_sha, _ = facts
    j.id = memory_id
    j.stale = layer.is_stale(rel, source_sha)
    fetched = options.fetch_counts.get((layer.scope, memory_id), 0)
    j.multipliers = multipliers(
        lifecycle, confidence, j.stale, layer.scope, fetched, skill_query and memory_type == "skill"
    )
    j.rescore(j.relevance)


def _hidden_by_reason(reads: Reads, options: Options) -> dict[str, set[int]]:
    """The layer's hidden memories, by reason (`HIDDEN_SQL`)."""
    if reads.exported:
        return exported.hidden_by_reason(reads.conn, options.visibility_params())
    sql = f"SELECT hidden, json_group_array(rowid) FROM ({HIDDEN_ROWS_SQL}) GROUP BY hidden"
    return {reason: set(json.loads(listed)) for reason, listed in reads.rows(sql, options.visibility_params())}


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
