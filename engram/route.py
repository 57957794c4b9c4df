"""Read flow, steps 2 and 4: anchors, ranking across layers, the relevance decision.

``match`` judges each layer's memories; here they are ranked across layers,
reranked by related edges, and the fitted decision of `relevance` says whether
the task is about this folder at all and, if it is, which candidates pack as
bodies, which as cards and which are listed among the omitted. The memories
hooks choose without a query (by tag, by `applies_to` path) are ranked here
too. `total related` is a count: a word found in thousands of memories costs
no thousands of Python objects. Stdlib only.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import time
from collections import Counter

from . import gate, relevance, terms
from .evidence import COLUMN_INDEX, COLUMNS, FIELD_OF, WINDOW, holders, memory_count
from .globs import applying, holds_a_path, literal_length, paths_in
from .index import HIDDEN_SQL
from .layers import Layer
from .lazyre import LazyPattern
from .match import Judged, LayerMatch, match_layer, speaks

RELATED_BOOST = 0.1  # times the tag overlap with the best hit
# A query's first distinct words up to this many are its anchors (of which `evidence` looks up
# the most specific). A pasted log or file is no task description: this bounds the work.
MAX_ANCHORS = 256
# A task is routed on its first pages, from the CLI, a hook or MCP alike: words past a long bug
# report's first pages never become anchors, and a pasted log of megabytes would take seconds.
MAX_TASK_CHARS = 20_000
LACKS_LISTED = 3  # query words named in dry-run as what an omitted candidate does not hold
TYPE_ORDER = {"rule": 0, "skill": 1, "knowledge": 2}  # memories chosen by tag: rules first
CANDIDATE_FIELDS = (
    "rowid", "id", "rel", "type", "authority", "confidence", "lifecycle", "level", "valid_until", "roles", "tags",
    "directive", "summary", "triggers", "title", "applies_to", "depends_on", "tokens", "ignored", "safety",
    "source_sha256",
)  # fmt: skip
CANDIDATE_COLUMNS = ", ".join(f"m.{name}" for name in CANDIDATE_FIELDS)  # the row a Candidate holds


class Anchor:
    __slots__ = ("word", "joined", "pair", "source", "foreign", "software", "concept", "inside", "implied_too")

    def __init__(
        self,
        word: terms.Word,
        joined: tuple[str, ...] = (),
        pair: bool = False,
        source: str = "",
        concept: bool = False,
    ) -> None:
        self.word = word
        # The anchor glued to the query word before or after it (`spring boot` -> `springboot`),
        # as a name is often written in an id or tag; matched in strong fields only, where such
        # a name is the memory's subject (a body's `ApolloClient` is incidental). A memory holding
        # the name holds each of its words.
        self.joined = joined
        # A name written in two query words (`styled-components`, `spring boot`), an anchor of its
        # own: found in strong fields only (as one glued term), it weighs what the name weighs,
        # not what its two common words do. Not so a compound the task writes with a hyphen
        # ("front-end"): it is one word, found in every field as the index holds a memory's
        # "front-end" (`terms.hyphen_compounds`), listed with the names.
        self.pair = pair
        # For a technology the query implies (`signatures`), the identifier that implies it; such an
        # anchor is matched like a two-word name, in strong fields only.
        self.source = source
        # A word of the task's own language where that is not English (CJK, or Vietnamese with its
        # marks), and whether it is a word of software writing (`devwords`): what tells a developer's
        # question from everyday text around a stack's name (`match`).
        self.foreign = False
        self.software = False
        # A concept of project work the task writes in other words (`concepts`: "nullable column"
        # -> migrations): matched as a name is, in folders under SMALL_FOLDER only (`gather`), and no
        # technology the task implies (`implied_candidate`). ``source``: the two words.
        self.concept = concept
        # A word inside an identifier the task pasted (`process` of `MainProcess`), unless it is a
        # technology's name: found where a memory spells words out, not in its id or tags
        # (`ERROR/MainProcess` of every Celery log line is no `release-process`).
        self.inside = False
        # A technology's name the task writes that its identifiers imply as well ("Kafka" beside
        # `RecordTooLargeException`): as sure a sign as the implied anchor it makes unneeded
        # (`implied_candidate`), which writing the name must not lose.
        self.implied_too = False

    @property
    def text(self) -> str:
        return self.word.text

    @property
    def is_type_word(self) -> bool:
        return self.word.text in terms.TYPE_WORDS


def anchors_of(query: str) -> tuple[list[Anchor], int]:
    """The meaningful query words (no stopwords, no generic memory words, no repeats), the first
    MAX_ANCHORS of them, then the two-word names they form (`Anchor.pair`) and the technologies
    their identifiers imply (`signatures`); and how many later meaningful words were left out."""
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
    from . import signatures  # its tables take about 9 ms to load: file and session events never need it

    for part in terms.identifier_parts(query, signatures.TECHNOLOGIES_NAMED):
        word = terms.meaningful(part)
        if word is not None and word.terms not in seen:
            seen.add(word.terms)
            words.append(Anchor(word))
            words[-1].inside = word.terms[0] not in signatures.TECHNOLOGIES_NAMED  # `kafka` of KafkaConsumer names
    if terms.plain_vietnamese(written) or (
        not query.isascii() and any(char.isalpha() for char in terms.non_ascii_chars(query))
    ):
        _mark_foreign(query, words)  # a curly quote or a dash is no foreign word: no word lists to load
    anchors, unused = words[:MAX_ANCHORS], len(words) - MAX_ANCHORS
    kept = {anchor.word.terms: anchor for anchor in anchors}
    compounds = terms.hyphen_compounds(query) if "-" in query else []
    for position, term in glued.items():
        first, second = found[position], found[position + 1]  # first: an anchor; second: None for a number
        if first and (term,) not in seen and first.terms in kept and (second is None or second.terms in kept):
            seen.add((term,))
            name = terms.Word(f"{first.text}-{written[position + 1].text}", (term,), False)
            anchors.append(Anchor(name, pair=first.text + written[position + 1].text not in compounds))
            anchors[-1].foreign = kept[first.terms].foreign or bool(second and kept[second.terms].foreign)
    for compound in compounds:
        _spell_compound(anchors, compound, seen)
    # the technologies the query's identifiers imply or it names, each by the names it does not write
    implied: dict[str, Anchor] = {}
    by_identifier = signatures.implied(written) + signatures.in_code(query)
    for tech, names, source in by_identifier + signatures.renamed([a.word for a in anchors]):
        others = tuple(name for name in names if (name,) not in seen)
        if others and tech not in implied and len(implied) < signatures.MAX_IMPLIED:
            implied[tech] = Anchor(terms.Word(tech, others, False), pair=True, source=source)
    _mark_implied_too(anchors, {tech for tech, _, _ in by_identifier})
    anchors += implied.values()
    from . import concepts  # its table is loaded only where a task is routed, as the signatures are

    # the concepts the task writes in other words, each by the names it does not write ("ship a
    # new version" looks for `release` and `publish`, not again for `ship`)
    # and the concepts a technology it names or implies is an instance of (`vitest`: testing); not
    # by an everyday word (the helm of a sailboat is no Kubernetes deployment)
    named = [
        tech
        for anchor in anchors
        if anchor.word.terms[0] not in signatures.EVERYDAY_NAMES
        for tech in _named_technologies(anchor)
    ]
    given = concepts.signalled(written) + concepts.of_technologies([*named, *implied])
    for concept, names, source in given:
        others = tuple(name for name in names if (name,) not in seen)
        if others and not any(a.concept and a.text == concept for a in anchors):
            anchors.append(Anchor(terms.Word(concept, others, False), pair=True, source=source, concept=True))
    return anchors, max(0, unused)


def _named_technologies(anchor: Anchor) -> tuple[str, ...]:
    """The technologies the anchor's word is a name of (`signatures.TECHNOLOGIES_NAMED`)."""
    from . import signatures  # loaded by `anchors_of` already

    return signatures.TECHNOLOGIES_NAMED.get(anchor.word.terms[0], ())


def _mark_implied_too(anchors: list[Anchor], implied: set[str]) -> None:
    """Mark the technology names the task writes that its identifiers imply too (`Anchor.implied_too`)."""
    for anchor in anchors:
        if not anchor.source and implied.intersection(_named_technologies(anchor)):
            anchor.implied_too = True


def _mark_foreign(query: str, anchors: list[Anchor]) -> None:
    from . import devwords  # only a task with non-ASCII letters or plain Vietnamese needs the word lists

    foreign = devwords.foreign_words(query)
    for anchor in anchors:
        if anchor.word.cjk or anchor.text in foreign:
            anchor.foreign = True
            anchor.software = devwords.holds_one(anchor.text) if anchor.word.cjk else foreign[anchor.text]


def _spell_compound(anchors: list[Anchor], compound: str, seen: set[tuple[str, ...]]) -> None:
    """A compound the task writes with a hyphen, one part of which is no anchor ("e-mail",
    "logged-in"), is also the other part's word: `mail` finds a memory's "email" as well. Not an
    anchor of its own: its word is counted once, by the part."""
    term = terms.stem(compound)
    if (term,) in seen:
        return
    for anchor in anchors:
        text = anchor.word.text
        rest = compound.removeprefix(text) if compound.startswith(text) else compound.removesuffix(text)
        if not anchor.pair and rest not in ("", compound) and terms.meaningful(terms.words(rest)[0]) is None:
            anchor.word = terms.Word(text, (*anchor.word.terms, term), anchor.word.cjk)
            seen.add((term,))
            return


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
        "layer", "row", "judged", "score", "multipliers", "omission", "stale", "prerequisite_of", "tier", "held_alone",
    )  # fmt: skip

    def __init__(self, layer: Layer, row: sqlite3.Row, omission: str | None = None) -> None:
        self.layer = layer
        self.row = row
        self.judged: Judged | None = None  # its evidence and relevance; None when fetched by id, tag or path
        self.score = 0.0  # relevance times the multipliers
        self.multipliers: list[tuple[str, float]] = []
        self.omission = omission  # why it is left out, one word (DESIGN 5); None while it is in
        self.stale = False
        self.prerequisite_of: str | None = None  # set when pulled in by a dependent's depends_on
        self.tier = relevance.OUT  # `relevance.tier`: body, card, plausible or out
        # for one failing the anchor rule: the one word of the task it holds, and the fields holding it
        self.held_alone: tuple[int, list[str]] | None = None

    @property
    def id(self) -> str:
        return self.row["id"]

    @property
    def relevance(self) -> float:
        return self.judged.relevance if self.judged else 0.0

    @property
    def clause_score(self) -> float:
        """Its score as the memory leading one clause of a task of several (`match.judge_clauses`)."""
        return self.judged.clause_score if self.judged else 0.0

    @property
    def judged_relevance(self) -> float | None:
        """Its relevance, rounded for output; None for one never judged against the task (a
        prerequisite, or chosen by id, tag or path), which no number would describe."""
        return round(self.judged.relevance, 4) if self.judged else None

    @property
    def scope(self) -> str:
        return self.layer.scope

    @property
    def key(self) -> str:
        return f"{self.scope}:{self.id}"

    @property
    def dependent_key(self) -> str | None:
        """For a prerequisite pulled into the pack, the key of the memory that depends on it."""
        return f"{self.scope}:{self.prerequisite_of}" if self.prerequisite_of else None

    @property
    def tags(self) -> list[str]:
        return json.loads(self.row["tags"])

    def matched_fields(self, anchors: list[Anchor]) -> dict[int, list[str]]:
        """For each anchor the memory holds (by its index), the fields it holds it in (for dry-run
        reasons)."""
        if self.judged is None:
            return {}
        linked = self._linked_terms()
        out = {}
        for index, counts in self.judged.found.counts.items():
            fields = fields_holding(counts)
            if linked is not None and "body" in fields:  # say which: a pointer's body holds its documents' terms
                held = set(anchors[index].word.terms)
                place = [name for name, found in zip(("body", "linked document"), linked) if held & found]
                fields[fields.index("body") : fields.index("body") + 1] = place or ["body"]
            out[index] = fields
        return out

    def _linked_terms(self) -> tuple[set[str], set[str]] | None:
        """For a pointer memory (`pointers`): the terms of its own body and of the documents it links
        to; None for any other memory."""
        rows = self.layer.reads.rows("SELECT body, pointed FROM memories WHERE rowid = ?", (self.row["rowid"],))
        if not rows or not rows[0][1]:
            return None
        return set(terms.index_terms(rows[0][0]).split()), set(rows[0][1].split())

    def lacks(self, routing: Routing) -> list[str]:
        """The query words the folder knows that the memory does not hold: first those some memory
        is named or tagged for (`postgresql`, not a body's `spent`), then the most specific."""
        held = self.judged.found.counts if self.judged else {}
        missing = (i for i in routing.lack_order() if i not in held)
        return [routing.label(routing.scoring[i]) for i in itertools.islice(missing, LACKS_LISTED)]


class Options:
    __slots__ = ("limit", "roles", "include_low", "everything", "explain", "fetch_counts", "today", "model")

    def __init__(
        self,
        limit: int = 8,
        roles: tuple[str, ...] = (),
        include_low: bool = False,
        everything: bool = False,
        explain: bool = False,
        fetch_counts: dict[tuple[str, str], int] | None = None,
        today: str | None = None,
        model: relevance.Model | None = None,
    ) -> None:
        self.limit = limit
        self.roles = roles
        self.include_low = include_low  # --all and --id show low-confidence memories
        self.everything = everything  # --all: every visible routed match, no refinement and no cap
        self.explain = explain  # dry-run and JSON: list omitted candidates and narrowing tags
        self.fetch_counts = fetch_counts or {}
        self.today = today or time.strftime("%Y-%m-%d")  # local date, as date.today() gives
        self.model = model or relevance.FITTED  # the relevance decision (another one only when fitting)

    def visibility_params(self) -> dict[str, object]:
        return {"roles": json.dumps(list(self.roles)), "today": self.today, "include_low": self.include_low}


class Routing:
    def __init__(self, anchors: list[Anchor], admitted: list[Candidate], pack: list[Candidate]) -> None:
        self.anchors = anchors  # the query's anchors worth listing (no type words, no name no memory has)
        self.scoring = anchors  # every anchor judged on, as `evidence` indexes them
        self.unused_words = 0  # meaningful query words past MAX_ANCHORS
        self.set_aside = 0  # foreign words of a developer's question not judged on (`_english_alone`)
        self.admitted = admitted  # passed visibility, lifecycle and the anchor rule, ranked (the best WINDOW)
        self.pack = pack  # the selection, ranked
        self.total_related = len(admitted)  # route() counts past the window
        self.on_topic = 0.0  # the task's relevance to this folder (`relevance.on_topic`)
        self.off_topic = False  # the decision: nothing here is about the task
        self.topic_bar = 0.0  # the decision's bar for `on_topic`
        # What made the task on-topic (`relevance.on_topic_because`) and the memory that did, if one did
        self.topic_reason = ""
        self.topic_by: Candidate | None = None
        self.thin: float | None = None  # off-topic as a thin pack (`relevance.thin_pack`): its best relevance
        self.omitted: list[Candidate] = []  # with their omission (listed with Options.explain)
        self.unlisted = 0  # candidates omitted but not listed (beyond the window)
        self.narrow_tags: list[str] = []
        self.idf: list[float] = []  # per anchor, its IDF in the first index holding it (0: none does)
        self.subjects: set[int] = set()  # the anchors some memory is named or tagged for
        self._lack_order: list[int] | None = None
        self.task = ""  # as routed
        self._secrets: tuple[str, ...] | None = None
        self.paths: list[str] = []  # the paths the task writes (`globs.paths_in`)

    def shown(self, word: str) -> str:
        """A word of the task as printed (`gate.task_word`): withheld inside a secret it holds."""
        if self._secrets is None:
            self._secrets = gate.secret_parts(self.task)
        return gate.task_word(word, self._secrets)

    def label(self, anchor: Anchor) -> str:
        """An anchor as dry-run names it: its word, and where a name, an implied technology or a
        concept came from (`django (from django admin)`: not the word `django` itself)."""
        shown = self.shown(anchor.text)
        return f"{shown} (from {self.shown(anchor.source)})" if anchor.source else shown

    def lack_order(self) -> list[int]:
        """The anchors some memory holds, in the order an omitted memory is said to lack them
        (`Candidate.lacks`): subjects first, then the most specific; not a part of a longer word
        some memory holds (`postgre` of `PostgreSQL`)."""
        if self._lack_order is None:
            texts = [anchor.text for anchor in self.scoring]
            known = [i for i, weight in enumerate(self.idf) if weight]
            parts = {i for i in known if any(_part_of(texts[i], texts[j]) for j in known)}
            self._lack_order = sorted(set(known) - parts, key=lambda i: (i not in self.subjects, -self.idf[i]))
        return self._lack_order


# --- visibility --------------------------------------------------------------------------------


def visible_candidates(
    layers: list[Layer], where: str, options: Options, params: dict | None = None
) -> list[Candidate]:
    """Visible memories matching an SQL condition on ``m`` (memories); a workspace id hides the global one."""
    out = []
    for layer in layers:
        layer.conn.row_factory = sqlite3.Row
        sql = f"SELECT {CANDIDATE_COLUMNS} FROM memories AS m WHERE ({where}) AND ({HIDDEN_SQL}) IS NULL"
        for row in layer.conn.execute(sql, {**options.visibility_params(), **(params or {})}):
            if row["rowid"] not in layer.shadowed:
                out.append(_candidate(layer, row))
    return out


def candidate_by_id(layer: Layer, memory_id: str, options: Options) -> Candidate | None:
    """One memory by id, with why it is hidden as ``omission`` (None when visible)."""
    layer.conn.row_factory = sqlite3.Row
    row = layer.conn.execute(
        f"SELECT {CANDIDATE_COLUMNS}, {HIDDEN_SQL} AS hidden FROM memories AS m WHERE m.id = :id",
        {"id": memory_id, **options.visibility_params()},
    ).fetchone()
    return None if row is None else _candidate(layer, row, omission=row["hidden"])


def first_by_id(layers: list[Layer], memory_id: str, options: Options) -> Candidate | None:
    """The first layer holding the id wins: the workspace copy over the global one, hidden or not."""
    for layer in layers:
        cand = candidate_by_id(layer, memory_id, options)
        if cand is not None:
            return cand
    return None


def fields_holding(counts: list[float]) -> list[str]:
    """The fields a memory's counts of one anchor hold it in, as dry-run names them."""
    return [COLUMNS[c] if FIELD_OF[c] != "paths" else "applies_to" for c, n in enumerate(counts) if n]


def _candidate(layer: Layer, row: sqlite3.Row, omission: str | None = None) -> Candidate:
    cand = Candidate(layer, row, omission)
    cand.stale = layer.is_stale(row["rel"], row["source_sha256"])
    return cand


def _rows(layer: Layer, rowids: list[int]) -> dict[int, sqlite3.Row]:
    rows = _in_chunks(layer, f"SELECT {CANDIDATE_COLUMNS} FROM memories AS m WHERE m.rowid IN ({{}})", rowids)
    return {row["rowid"]: row for row in rows}


def _in_chunks(layer: Layer, sql: str, rowids: list[int]) -> list[sqlite3.Row]:
    """Rows of an ``IN ({})`` query over any number of rowids (SQLite caps bound parameters)."""
    layer.conn.row_factory = sqlite3.Row
    out: list[sqlite3.Row] = []
    for start in range(0, len(rowids), 900):
        chunk = rowids[start : start + 900]
        out += layer.conn.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
    return out


# --- selecting memories without a query --------------------------------------------------------


def tagged_memories(layers: list[Layer], tags: frozenset[str], options: Options) -> list[Candidate]:
    """Visible memories holding one of ``tags``: the workspace's first, then rules, skills and knowledge, by id."""
    found = [c for c in visible_candidates(layers, "tags != '[]'", options) if tags & set(c.tags)]
    return sorted(found, key=lambda c: (c.scope != "workspace", TYPE_ORDER.get(c.row["type"], 9), c.id))


def path_memories(layers: list[Layer], paths: list[str], options: Options) -> list[Candidate]:
    """Memories with an `applies_to` glob matching one of the paths, most specific glob first."""
    ranked = []
    for layer in layers:
        # Globs first, from their own index; whole rows only for the memories that match.
        globs = layer.reads.rows("SELECT rowid, applies_to FROM memories WHERE applies_to != '[]'")
        by_globs: dict[str, int | None] = {}  # many memories share their globs: each list is matched once
        for _, raw in globs:
            if raw not in by_globs:
                by_globs[raw] = _specificity(json.loads(raw), paths)
        specificity = {rowid: best for rowid, raw in globs if (best := by_globs[raw]) is not None}
        where = "m.rowid IN (SELECT value FROM json_each(:rowids))"
        for cand in visible_candidates([layer], where, options, {"rowids": json.dumps(list(specificity))}):
            ranked.append((-specificity[cand.row["rowid"]], cand.scope != "workspace", cand.id, cand))
    return [entry[-1] for entry in sorted(ranked, key=lambda e: e[:3])]


def _specificity(globs: list[str], paths: list[str]) -> int | None:
    """The longest literal part of a glob applying to one of the paths (`globs.applying`), None when none does."""
    hits = [literal_length(glob) for path in paths for glob in applying(globs, path)]
    return max(hits) if hits else None


# --- routing -----------------------------------------------------------------------------------


def route(layers: list[Layer], query: str, options: Options) -> Routing:
    query = query[:MAX_TASK_CHARS]
    routing, found = gather(layers, query, options)
    rank(routing, found)
    decide(routing, found, query, options)
    return routing


def gather(layers: list[Layer], query: str, options: Options) -> tuple[Routing, list[LayerMatch]]:
    """The query's anchors and every layer's judged memories (`match.match_layer`), not yet ranked."""
    anchors, unused_words = anchors_of(query)
    if any(a.concept for a in anchors) and _largest(layers) >= relevance.SMALL_FOLDER:
        anchors = [a for a in anchors if not a.concept]  # many stacks' rules name concepts in passing
    scoring = [a for a in anchors if not a.is_type_word]
    routing = Routing(scoring, [], [])
    routing.task = query
    routing.unused_words = unused_words
    routing.paths = paths_in(query) if "/" in query else []
    if not scoring:
        return routing, []  # no anchors, or only a type word: never a broad match
    skill_query = len(scoring) < len(anchors)
    if alone := _english_alone(layers, scoring):
        routing.set_aside = len(scoring) - len(alone)
        routing.scoring = scoring = alone
    parts = clauses_of(query, scoring)
    clauses = (parts, technology_anchors(scoring) if parts else frozenset())
    found = [
        m for layer in layers if (m := match_layer(layer, scoring, options, skill_query, options.everything, clauses))
    ]
    routing.total_related = sum(m.admitted_count for m in found)
    routing.idf = [next((m.evidence.idf[i] for m in found if m.evidence.df[i]), 0.0) for i in range(len(scoring))]
    routing.subjects = {i for m in found for i, holders in m.evidence.name_holders.items() if holders}
    # a two-word name no memory has is no anchor worth listing: most adjacent words form none
    routing.anchors = [a for a, weight in zip(scoring, routing.idf) if not a.pair or weight]
    return routing, found


# Where a task turns to another: a sentence's end, a line break, "and" / "also" / "then" / "plus".
_CLAUSE_BREAK = LazyPattern(r"(?<=[.!?;])\s+|\n+|\s+(?:and|also|then|plus)\s+|,\s+(?:and\s+)?(?:then|also)\s+", re.I)
MIN_CLAUSE_ANCHORS = 2
MAX_CLAUSES = 6


def clauses_of(query: str, anchors: list[Anchor]) -> tuple[frozenset[int], ...]:
    """The anchors of each clause of a task of several (two clauses or more, each holding
    MIN_CLAUSE_ANCHORS anchors or more, the first MAX_CLAUSES of them); none for one clause."""
    out: list[frozenset[int]] = []
    for clause in _CLAUSE_BREAK.split(query):
        lowered = clause.lower()
        held = frozenset(i for i, anchor in enumerate(anchors) if _in_clause(anchor, lowered))
        if len(held) >= MIN_CLAUSE_ANCHORS and held not in out:
            out.append(held)
    return tuple(out[:MAX_CLAUSES]) if len(out) > 1 else ()


def _in_clause(anchor: Anchor, lowered: str) -> bool:
    """Whether a clause writes the anchor: its source for an implied one, else each of its words."""
    if anchor.source:
        return anchor.source.lower() in lowered
    return all(part in lowered for part in anchor.word.text.split("-") if part)


def technology_anchors(anchors: list[Anchor]) -> frozenset[int]:
    """The anchors that name a technology: one the task's identifiers imply, or a word that is a
    technology's name (`_named_technologies`)."""
    return frozenset(
        i for i, anchor in enumerate(anchors)
        if (anchor.source and not anchor.concept) or (not anchor.pair and _named_technologies(anchor))
    )  # fmt: skip


def _part_of(part: str, word: str) -> bool:
    """``part`` starts or ends a longer word (`postgre` and `sql` of `postgresql`), as the words
    inside an identifier the task wrote are anchors of their own; a two-word name (`django-4`)
    is no word."""
    return part != word and word.isalnum() and (word.startswith(part) or word.endswith(part))


def _largest(layers: list[Layer]) -> int:
    """The memories of the largest index."""
    return max((memory_count(layer.reads) for layer in layers), default=0)


def _english_alone(layers: list[Layer], scoring: list[Anchor]) -> list[Anchor]:
    """The anchors of a developer's question in a language no memory here is written in, but
    for its words of that language: "Python 读取文件时报错" routes as "Python" would alone. Its
    foreign words, none held here, would only thin the share of the task's words the folder
    holds. A developer's question is one that holds a word of software writing (`devwords`: 报错,
    lỗi); without one its foreign words stay (everyday text, `match`). Empty when the task is
    not such a question or has no other anchor."""
    if not any(a.software for a in scoring):
        return []
    foreign = [a for a in scoring if a.foreign and not a.pair]
    if any(speaks(holders(layer.reads, foreign)) for layer in layers):
        return []
    return [anchor for anchor in scoring if not anchor.foreign]


def rank(routing: Routing, found: list[LayerMatch]) -> None:
    """The judged memories of every layer as candidates, ranked by score, then reranked by related edges."""
    routing.admitted = _ranked(found)
    _rerank_related(routing.admitted)


def decide(routing: Routing, found: list[LayerMatch], query: str, options: Options) -> None:
    """The relevance decision (`_decide`), and with Options.explain what was left out and why."""
    _decide(routing, found, query, options)
    if options.explain:
        _explain(routing, found)


def _ranked(found: list[LayerMatch]) -> list[Candidate]:
    """The judged candidates of every layer as candidates, by score (the workspace first on a tie)."""
    judged = sorted(
        ((m, j) for m in found for j in m.judged), key=lambda e: (-e[1].score, e[0].layer.scope != "workspace", e[1].id)
    )
    rows: dict[int, dict[int, sqlite3.Row]] = {}
    for m in found:
        rows[id(m)] = _rows(m.layer, [j.rowid for j in m.judged])
    out = []
    for m, j in judged:
        cand = Candidate(m.layer, rows[id(m)][j.rowid])
        cand.judged, cand.score, cand.multipliers, cand.stale = j, j.score, j.multipliers[:], j.stale
        out.append(cand)
    return out


def _rank_key(cand: Candidate) -> tuple:
    return (-cand.score, cand.scope != "workspace", cand.id)


def _rerank_related(admitted: list[Candidate]) -> None:
    """A small boost for candidates related (shared tags) to the best hit.

    Only memories that already matched the query are touched: a related edge never admits one.
    """
    if len(admitted) < 2:
        return
    best = admitted[0]
    weights = dict(
        best.layer.conn.execute(
            "SELECT dst, weight FROM edges WHERE src = ? AND kind = 'related'", (best.id,)
        ).fetchall()
    )
    for cand in admitted[1:]:
        if cand.layer is best.layer and cand.id in weights:
            factor = 1 + RELATED_BOOST * weights[cand.id]
            cand.multipliers.append(("related", round(factor, 3)))
            cand.score = min(cand.score * factor, best.score)  # never above the hit that relates it
    admitted[1:] = sorted(admitted[1:], key=_rank_key)


def _decide(routing: Routing, found: list[LayerMatch], query: str, options: Options) -> None:
    """Whether the task is about this folder, then each candidate's tier; the selected pack
    (bodies and cards) up to the load limit. With --all, every admitted candidate packs."""
    if not routing.admitted:
        return
    if options.everything:
        routing.pack = routing.admitted[:]
        return
    model = options.model
    routing.on_topic = model.task_relevance(query_features(routing, found, query))
    most_relevant = max(routing.admitted, key=lambda c: c.relevance)
    memories = max(m.evidence.total for m in found)
    # Everyday text in another language around a stack's name (a zoo's python, パイソン) is left to
    # the task model: a memory named for that name is no surer sign than the name is
    everyday = any(m.everyday for m in found)
    named = None if everyday else named_candidate(routing.admitted)
    implied = implied_candidate(routing)
    sure = 0.0 if everyday else most_relevant.relevance
    judged_in = max(memories, int(model.gated_from)) if everyday else memories  # a folder of 6 judges it too
    triggered = triggered_candidates(routing)
    routing.topic_reason = model.topic_reason(
        routing.on_topic, sure, judged_in, _relevance_of(named), _relevance_of(implied)
    ) or (relevance.TRIGGER_TOPIC if triggered else "")
    routing.topic_by = {
        relevance.NAMED_TOPIC: named,
        relevance.IMPLIED_TOPIC: implied,
        relevance.SURE_TOPIC: most_relevant,
        relevance.TRIGGER_TOPIC: triggered[0] if triggered else None,
    }.get(routing.topic_reason)
    routing.off_topic = not routing.topic_reason
    routing.topic_bar = model.on_topic
    best = routing.admitted[0].score
    routing.admitted.sort(key=lambda cand: cand not in triggered)  # the phrase its author chose comes first
    tiers = [
        relevance.BODY_TIER if cand in triggered else model.tier(max(cand.score, cand.clause_score), best)
        for cand in routing.admitted
    ]
    if not routing.off_topic and not triggered:
        would_pack = [c for c, tier in zip(routing.admitted, tiers) if tier in relevance.SELECTED][: options.limit]
        routing.thin = relevance.thin_pack([(c.relevance, is_thin(c)) for c in would_pack], memories)
        routing.off_topic = routing.thin is not None
    if routing.topic_reason not in relevance.TASK_DECIDED:
        # The task model doubted the task; one memory (and any it triggers) made it about the folder:
        # that one packs, the rest are listed as plausible at most.
        deciders = [routing.topic_by, *triggered]
        tiers = [
            relevance.PLAUSIBLE_TIER if tier in relevance.SELECTED and cand not in deciders else tier
            for cand, tier in zip(routing.admitted, tiers)
        ]
    for cand, tier in zip(routing.admitted, tiers):
        cand.tier = relevance.OUT if routing.off_topic else tier
        if cand.tier in relevance.SELECTED and len(routing.pack) < options.limit:
            routing.pack.append(cand)
        else:
            cand.omission = "limit" if cand.tier in relevance.SELECTED else "relevance"


def triggered_candidates(routing: Routing) -> list[Candidate]:
    """The candidates with a trigger of two words or more that the task writes whole, in any form of
    its words ("implement the new card 'Ashen Warden' ..." and `triggers: [new card]`): their author
    listed the phrase as what people type for them, so it packs them whatever else the task says."""
    task: list[tuple[str, ...]] | None = None
    triggered = []
    for cand in routing.admitted:
        if not _triggers_hold_a_word(cand):  # most candidates: a prompt meets every one of them
            continue
        phrases = [p for p in map(_phrase_terms, json.loads(cand.row["triggers"])) if p]
        if phrases:
            task = task if task is not None else [word.terms for word in terms.words(routing.task)]
            if any(_writes(task, phrase) for phrase in phrases):
                triggered.append(cand)
    return triggered


def _triggers_hold_a_word(cand: Candidate) -> bool:
    """Whether the memory's triggers hold a word of the task, as the evidence found: a trigger the task
    writes whole does (one of stopwords alone is none)."""
    return cand.judged is not None and any(
        counts[COLUMN_INDEX["triggers"]] for counts in cand.judged.found.counts.values()
    )


def _phrase_terms(trigger: str) -> list[tuple[str, ...]]:
    """A trigger's words as terms, if it has two or more and not only stopwords; else []."""
    words = terms.words(trigger)
    return [word.terms for word in words] if len(words) > 1 and not all(map(terms.is_stopword, words)) else []


def _writes(task: list[tuple[str, ...]], phrase: list[tuple[str, ...]]) -> bool:
    """Whether the phrase's words stand side by side in the task."""
    return any(task[start : start + len(phrase)] == phrase for start in range(len(task) - len(phrase) + 1))


def is_thin(cand: Candidate) -> bool:
    """The candidate holds the task's words in its body alone (`relevance.thin`)."""
    return cand.judged is not None and relevance.thin(cand.judged.features)


def implied_candidate(routing: Routing) -> Candidate | None:
    """The best candidate the task implies (`relevance.on_topic_because`): named or tagged for a
    technology its identifiers imply (`signatures`: `go` for a `goroutine`), or whose `applies_to`
    names a folder holding a path it writes (`src/api/**` for "src/api/users.py"), as a file event
    under that folder would load it."""
    from . import signatures  # loaded by `anchors_of` already

    # a name written in Hangul or katakana (파이썬, パイソン) is the name, as plainly written as "python":
    # it implies nothing about the task that the task does not say (a zoo's パイソン)
    implied = [
        index
        for index, anchor in enumerate(routing.scoring)
        if (anchor.source and not anchor.concept and anchor.source not in signatures.SCRIPT_NAMES) or anchor.implied_too
    ]
    holders = [
        c for c in routing.admitted if c.judged and (c.judged.found.names_any(implied) or _on_a_path(c, routing))
    ]
    return max(holders, key=lambda c: c.relevance, default=None)


def _on_a_path(cand: Candidate, routing: Routing) -> bool:
    return bool(routing.paths) and holds_a_path(json.loads(cand.row["applies_to"]), routing.paths)


def named_candidate(admitted: list[Candidate]) -> Candidate | None:
    """The best candidate named for a word of the task (`relevance.on_topic_because`)."""
    return max(
        (c for c in admitted if c.judged and c.judged.features["named"]), key=lambda c: c.relevance, default=None
    )


def _relevance_of(cand: Candidate | None) -> float:
    return cand.relevance if cand else 0.0


def query_features(routing: Routing, found: list[LayerMatch], query: str) -> dict[str, float]:
    """The task's features (`relevance.QUERY_FEATURES`) from the ranked candidates of every layer."""
    by_relevance = sorted(routing.admitted, key=lambda c: -c.relevance)
    count = len(routing.idf) or 1
    known = sum(routing.idf) or 1.0
    held = {a for c in by_relevance[: relevance.JOINT_AMONG] if c.judged for a in c.judged.found.counts}
    facts = {
        # words of the task no less for being set aside: they weigh against those no memory holds
        "unknown": len(set.intersection(*(m.unknown for m in found))) / (count + routing.set_aside) if found else 0.0,
        "strong_words": len(set().union(*(m.strong for m in found))) / count,
        "joint": sum(routing.idf[a] for a in held) / known,
        "words": len(routing.idf),
        "total": max(m.evidence.total for m in found),
    }
    features = [c.judged.features for c in by_relevance if c.judged]
    return relevance.query_features(query, [c.relevance for c in by_relevance], features, facts)


def _explain(routing: Routing, found: list[LayerMatch]) -> None:
    """The omitted candidates worth listing, how many more there are, and tags to narrow with."""
    packed = {c.key for c in routing.pack}
    cut = [c for c in routing.admitted if c.key not in packed]
    hidden = []
    for m in found:
        listed = sorted(rowid for rowids in m.omitted.values() for rowid in rowids)[:WINDOW]
        reasons = {rowid: why for why, rowids in m.omitted.items() for rowid in rowids}
        for row in _rows(m.layer, listed).values():
            cand = _candidate(m.layer, row, reasons[row["rowid"]])
            held = m.evidence.found.get(row["rowid"])
            if cand.omission == "anchors" and held is not None and len(held.counts) == 1:
                ((index, counts),) = held.counts.items()
                cand.held_alone = (index, fields_holding(counts))
            hidden.append(cand)
    routing.omitted = cut + hidden
    omitted_total = sum(len(rowids) for m in found for rowids in m.omitted.values())
    routing.unlisted = routing.total_related - len(routing.admitted) + omitted_total - len(hidden)
    # nothing was routed to narrow: an off-topic task is not about these memories, whatever their tags
    routing.narrow_tags = [] if routing.off_topic else _narrowing_tags(routing, found)


def _narrowing_tags(routing: Routing, found: list[LayerMatch]) -> list[str]:
    """`narrow_tags` over the tags of every related candidate."""
    tally: Counter = Counter()
    for m in found:
        for (tags,) in _in_chunks(m.layer, "SELECT m.tags FROM memories AS m WHERE m.rowid IN ({})", m.admitted_rowids):
            tally.update(set(json.loads(tags)))
    return narrow_tags(routing.anchors, tally, routing.total_related)


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
