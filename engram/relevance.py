"""The relevance decision: what each candidate is judged by, and whether a task is about this folder.

Two logistic models, each over named features, with the weights `benchmarks/fit.py`
fits on labelled tasks and writes into `relevance_weights`:

- a candidate's relevance, from the evidence it holds (`evidence.Found`): which
  query words, in which fields, how rare in this folder, its BM25F and its
  place among the others;
- the task's, from the best candidates and the query itself: is anything in
  this folder about it at all (off-topic detection, its own decision).

Scores are comparable across query lengths and folder sizes: IDF is counted in
units of the highest IDF the folder allows, and no feature is a share of the
query that only a short task could fill. Stdlib only.
"""

from __future__ import annotations

import math
import re

from . import relevance_weights as fitted
from .evidence import LEAD, NAME, Evidence, Found

CANDIDATE_FEATURES = (
    "bm25",  # BM25F over the anchors the memory holds, in units of the folder's highest IDF
    "bm25_share",  # BM25F as a share of the best candidate's
    "rank",  # log(1 + candidates with a higher BM25F): twins share a rank
    "gap",  # BM25F lead over the next lower candidate, as a share of the best's
    "name",  # specificity summed over the (at most TOP_EVIDENCE most specific) anchors held in the id or tags
    "lead",  # ... held in the directive, summary or triggers, not in the name
    "body",  # ... held only in the body or applies_to
    "name_max",  # the most specific anchor held in the name
    "strong_max",  # the most specific anchor held in a strong field (id, tags, directive, applies_to)
    "keyword",  # the most specific anchor the body keeps coming back to (its specificity, scaled
    # by its count in the body up to KEYWORD_COUNT): what a memory without tags is about
    "named",  # 1 when the memory's id is a query word or a two-word name of the query
    "held",  # log(1 + anchors held), counted up to WORDS_COUNTED
    "coverage",  # share of the IDF of the query words this folder knows that the memory holds
    "support",  # of the IDF of the other query words the folder knows, the share the memory holds
    # (the other words: all but the memory's most specific anchor; 1 when there are none)
    "words",  # log(1 + query anchors), counted up to WORDS_COUNTED
    "name_rarity",  # over the anchors held in the name: 1 / log2(1 + memories naming that anchor)
    "name_coverage",  # the share of the memory's id and tag terms the query holds
    "centrality",  # how much of the memory's name the other best candidates share (the family's general one)
)
CENTRAL_AMONG = 10
# Counts and sums that grow with the query's length stop growing here: a 300-word bug report
# holds no more evidence for the memory it names than a task of a dozen words does.
TOP_EVIDENCE = 3
WORDS_COUNTED = 32
KEYWORD_COUNT = 3
JOINT_AMONG = 3  # the best candidates (by BM25F) whose names `centrality` compares
QUERY_FEATURES = (
    "best",  # the best candidate's relevance
    "best_logit",  # the same as log-odds: a sure candidate (0.99) is far surer than a likely one (0.9)
    "second_share",  # the second candidate's relevance as a share of the best's
    "best_name",  # the most name evidence a candidate holds (`name`)
    "best_lead",  # the most directive evidence a candidate holds (`lead`)
    "best_strong",  # the most specific anchor any candidate holds in a strong field
    "best_bm25",  # the best candidate's `bm25`
    "best_support",  # the best candidate's `support`
    "best_coverage",  # the best candidate's `coverage`
    "joint",  # the `coverage` of the JOINT_AMONG most relevant candidates together (a task about two subjects)
    "named",  # 1 when some memory is named for a query word
    "unknown",  # share of the query's words (of letters) that no memory holds
    "unknown_folder",  # `unknown` times `folder`: in a small folder many ordinary words are simply not written yet
    "folder",  # the folder's size, log-scaled to 1 at FULL_FOLDER memories (and capped there)
    "strong_words",  # share of the query's anchors that some memory holds in a strong field
    "code",  # share of the query's tokens that look like code (identifiers, paths, calls, errors)
    "words",  # log(1 + query anchors), counted up to WORDS_COUNTED
)
FULL_FOLDER = 1000
CODE_TOKEN = re.compile(
    r"[a-z][A-Z]|[A-Za-z]\.[A-Za-z]|_\w|\w\(|[/\\]\w|::|=>|->|`|\b\w+(?:Error|Exception)\b|\bv?\d+\.\d+"
)


def logistic(weights: dict[str, float], values: dict[str, float]) -> float:
    """A fitted model's probability for some feature values."""
    z = sum(weight * values[name] if name != "bias" else weight for name, weight in weights.items())
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


def candidate_features(
    evidence: Evidence, ranked: list[Found], named: set[int], name_counts: dict[int, int], names: dict[int, set[str]]
) -> list[dict[str, float]]:
    """The features of each candidate of one index, in BM25F order (``ranked``). ``named``: the
    rowids named for a query word; ``name_counts``: per anchor, the memories holding it in the name;
    ``names``: each candidate's id and tag terms."""
    if not ranked:
        return []
    central = _centrality([names.get(f.rowid, set()) for f in ranked])
    known = sum(evidence.idf[a] for a in range(len(evidence.idf)) if evidence.df[a])
    top = evidence.top_idf or 1.0
    best = ranked[0].bm25 or 1.0
    words = math.log1p(min(evidence.anchor_count, WORDS_COUNTED))
    out = []
    higher, following = _ranks([f.bm25 for f in ranked])
    for place, found in enumerate(ranked):
        fields = {anchor: found.fields(anchor) for anchor in found.counts}
        in_name = [a for a, f in fields.items() if NAME in f]
        in_lead = [a for a, f in fields.items() if LEAD in f and NAME not in f]
        elsewhere = [a for a, f in fields.items() if not f & {NAME, LEAD}]
        spec = evidence.specificity
        out.append({
            "bm25": found.bm25 / top,
            "bm25_share": found.bm25 / best,
            "rank": math.log1p(higher[place]),
            "gap": (found.bm25 - following[place]) / best,
            "name": _top(map(spec, in_name)),
            "lead": _top(map(spec, in_lead)),
            "body": _top(map(spec, elsewhere)),
            "name_max": max(map(spec, in_name), default=0.0),
            "strong_max": max((spec(a) for a in fields if found.in_strong_field(a)), default=0.0),
            "keyword": max(spec(a) * min(1.0, found.body_count(a) / KEYWORD_COUNT) for a in fields),
            "named": float(found.rowid in named),
            "held": math.log1p(min(len(fields), WORDS_COUNTED)),
            "coverage": sum(evidence.idf[a] for a in fields) / known if known else 0.0,
            "support": _support([evidence.idf[a] for a in fields], known),
            "words": words,
            "name_rarity": sum(1 / math.log2(1 + name_counts.get(a, 1)) for a in in_name),
            "name_coverage": found.name_coverage(),
            "centrality": central[place],
        })  # fmt: skip
    return out


def _top(values) -> float:
    """The sum of the TOP_EVIDENCE largest values."""
    return sum(sorted(values, reverse=True)[:TOP_EVIDENCE])


def _support(held: list[float], known: float) -> float:
    """Of the weight of the query's other words (all but the best one held), the share held: does
    more than one word back the memory? A homonym holds its one word and nothing else."""
    others = known - max(held)
    return (sum(held) - max(held)) / others if others > 1e-9 else 1.0


def _ranks(scores: list[float]) -> tuple[list[int], list[float]]:
    """For scores in descending order: how many are higher than each, and the next lower score (0
    for the last); equal scores get equal values."""
    higher, following = [0] * len(scores), [0.0] * len(scores)
    start = 0
    for end in range(1, len(scores) + 1):
        if end == len(scores) or scores[end] != scores[start]:
            lower = scores[end] if end < len(scores) else 0.0
            for place in range(start, end):
                higher[place], following[place] = start, lower
            start = end
    return higher, following


def _centrality(names: list[set[str]]) -> list[float]:
    """For each candidate, the mean share of its name terms that each of the other CENTRAL_AMONG
    best candidates also has: the general memory of a family (`tailwind` among `*-tailwind-*`)
    scores high, a sibling with a name of its own low."""
    top = names[:CENTRAL_AMONG]
    out = []
    for place, name in enumerate(names):
        others = [other for position, other in enumerate(top) if position != place]
        out.append(sum(len(name & other) / len(name) for other in others) / len(others) if name and others else 0.0)
    return out


def query_features(
    query: str, relevances: list[float], features: list[dict[str, float]], facts: dict
) -> dict[str, float]:
    """The task's features, from its candidates in relevance order (``relevances``, ``features``)
    and what routing counted (``facts``: the shares `unknown`, `strong_words` and `joint`, the
    number of anchors `words`, and `total`, the memories of the largest index)."""
    best = relevances[0] if relevances else 0.0
    folder = min(1.0, math.log1p(facts["total"]) / math.log1p(FULL_FOLDER))
    second = relevances[1] if len(relevances) > 1 else 0.0
    return {
        "best": best,
        "best_logit": math.log(max(best, 1e-6) / max(1 - best, 1e-6)),
        "second_share": second / best if best else 0.0,
        "best_name": max((f["name"] for f in features), default=0.0),
        "best_lead": max((f["lead"] for f in features), default=0.0),
        "best_strong": max((f["strong_max"] for f in features), default=0.0),
        "best_bm25": max((f["bm25"] for f in features), default=0.0),
        "best_support": features[0]["support"] if features else 0.0,
        "best_coverage": features[0]["coverage"] if features else 0.0,
        "joint": facts["joint"],
        "named": max((f["named"] for f in features), default=0.0),
        "unknown": facts["unknown"],
        "unknown_folder": facts["unknown"] * folder,
        "folder": folder,
        "strong_words": facts["strong_words"],
        "code": code_share(query),
        "words": math.log1p(min(facts["words"], WORDS_COUNTED)),
    }


def code_share(query: str) -> float:
    tokens = query.split()
    return sum(1 for token in tokens if CODE_TOKEN.search(token)) / len(tokens) if tokens else 0.0


class Model:
    """A fitted decision: the two models' weights and the tiers' thresholds (`relevance_weights`)."""

    __slots__ = (
        "candidate", "query", "thresholds", "on_topic", "sure", "gated_from", "select", "relative", "body", "plausible",
    )  # fmt: skip

    def __init__(self, candidate: dict[str, float], query: dict[str, float], thresholds: dict[str, float]) -> None:
        self.candidate = candidate
        self.query = query
        self.thresholds = thresholds
        self.on_topic = thresholds["on_topic"]  # the task's relevance below which nothing here is about it
        # The folder size from which the task decision is trusted to say "nothing here"; below it
        # (a few memories, all about the project) only candidates are judged.
        self.gated_from = thresholds["gated_from"]
        self.sure = thresholds["sure"]  # a candidate this relevant makes the task about the folder
        self.select = thresholds["select"]  # a candidate's score from which it packs ...
        self.relative = thresholds["relative"]  # ... if also this share of the best candidate's
        self.body = thresholds["body"]  # a packed candidate's score from which it is a body
        # a score from which one left out is listed as a card (never under PLAUSIBLE_FLOOR)
        self.plausible = max(thresholds["plausible"], PLAUSIBLE_FLOOR)

    def candidate_relevance(self, values: dict[str, float]) -> float:
        return logistic(self.candidate, values)

    def task_relevance(self, values: dict[str, float]) -> float:
        return logistic(self.query, values)

    def topic_reason(self, task_relevance: float, best: float, memories: int, named: float, implied: float) -> str:
        """The task decision, from its relevance and the best candidate's: what makes the task about
        a folder of this many memories (`on_topic_because`), "" when nothing in it is. ``named``:
        the relevance of the best candidate named for a word of the task (`architecture` for
        "explain the project architecture"), which in a small folder, all of it about the project,
        is about the task when it is likely; ``implied``: the best candidate's named or tagged for
        a technology the task's identifiers imply (`go` for a `goroutine`), or whose `applies_to`
        folder holds a path the task writes, which is about the task wherever it would pack."""
        thresholds = (self.gated_from, self.on_topic, self.sure, self.select)
        return on_topic_because(task_relevance, best, memories, (named, implied), *thresholds)

    def tier(self, score: float, best: float) -> str:
        """A candidate's tier in an on-topic task: a body for a confident hit, a card for a plausible
        one, listed among the omitted for a possible one, else out."""
        if score >= max(self.select, self.relative * best):
            return BODY_TIER if score >= self.body else CARD_TIER
        return PLAUSIBLE_TIER if score >= self.plausible else OUT


# Not fitted by `fit.py`: chosen on the fitting parts, where from 0.8 down to 0.1 no small
# folder's off-topic task packs, and from 0.46 down two teams' tasks pack the memory named for them
# (docs/routing.md, "A memory named for the task").
SMALL_FOLDER = 64
SURE_NAMED = 0.4
# Nor this: in such a folder a candidate this relevant is about the task whatever the task model
# says of the rest of its words. No task of any set, fitting or held out, has one under an
# off-topic decision there (the best are 0.86 and below); a new user's "the response count on the
# survey summary page is really slow ..." did, at 0.98, and was told that nothing in the folder
# was about it. From 0.95 the folder parts lose no silence (docs/routing.md, "A sure candidate in
# a small folder").
SURE_SMALL = 0.95


# What makes a task about the folder (`on_topic_because`), beside its own relevance (TASK_TOPIC).
TASK_TOPIC, IMPLIED_TOPIC, NAMED_TOPIC, SURE_TOPIC, FEW_TOPIC = "task", "implied", "named", "sure", "few memories"
# Not a judgement: the task writes a trigger phrase of a memory whole (`route.triggered_candidates`).
TRIGGER_TOPIC = "trigger"
# What makes every candidate's tier count; on the other reasons one memory decided, and only it packs
# (with any memory the task triggers). "" is off-topic: nothing packs anyway.
TASK_DECIDED = (TASK_TOPIC, FEW_TOPIC, "")


def on_topic_because(
    task_relevance: float,
    best: float,
    memories: int,
    named_implied: tuple[float, float],
    gated_from: float,
    on_topic: float,
    sure: float,
    select: float,
) -> str:
    """The task decision (`Model.topic_reason`; `benchmarks/fit.py` searches its thresholds): what
    makes the task about the folder, or "" (off-topic). An implied technology's memory needs no bar
    but `select`: the identifiers that imply it are a stack's own (`signatures`), which everyday
    text seldom writes; on the fitting parts no off-topic task has one (docs/routing.md, "A memory
    named for an implied technology")."""
    named, implied = named_implied
    small = memories < SMALL_FOLDER
    reasons = (
        (task_relevance >= on_topic, TASK_TOPIC),
        (implied >= select, IMPLIED_TOPIC),
        (small and named >= SURE_NAMED, NAMED_TOPIC),
        ((small and best >= SURE_SMALL) or best >= sure, SURE_TOPIC),
        (memories < gated_from, FEW_TOPIC),
    )
    return next((reason for holds, reason in reasons if holds), "")


# Nor this: the fit calibrates `plausible` on the precision of every candidate above it (0.0196,
# 30 %), but one omitted there is listed as a card at a local precision of 4 %: on the fitting parts
# 545 of 2,002 omitted cards were under 0.03, 23 of them relevant (docs/routing.md, "Omitted cards").
PLAUSIBLE_FLOOR = 0.03


# Not fitted by `fit.py` either: in a folder this big, a pack whose memories all hold the task's
# words in their bodies alone, none of them at this relevance, is generic words of the task
# ("typo", "chapter", "error") meeting generic words of a rule; on the fitting parts no such
# pack held a hit (docs/routing.md, "Thin evidence").
THIN_BEST = 0.2


def thin(features: dict[str, float]) -> bool:
    """The candidate holds the task's words in its body alone: none in its name, directive,
    summary, triggers or paths."""
    return not (features["name"] or features["lead"] or features["strong_max"])


def thin_pack(pack: list[tuple[float, bool]], memories: int) -> float | None:
    """For a would-be pack as (relevance, `thin`) pairs in a folder of this many memories: its best
    relevance when the pack is too thin to load (every memory `thin`, none at THIN_BEST), else None."""
    if memories < SMALL_FOLDER or not pack or not all(is_thin for _, is_thin in pack):
        return None
    best = max(relevance for relevance, _ in pack)
    return best if best < THIN_BEST else None


BODY_TIER, CARD_TIER, PLAUSIBLE_TIER, OUT = "body", "card", "plausible", "out"
SELECTED = (BODY_TIER, CARD_TIER)
FITTED = Model(fitted.CANDIDATE, fitted.QUERY, fitted.THRESHOLDS)
