"""Read flow, steps 4-5: turn a routing into a compact pack.

Pulls `depends_on` prerequisites in before their dependents, runs the
hash and safety checks before anything is printed, decides bodies versus
cards (layered disclosure), and fits the whole output into a budget by
demoting bodies to cards first and only then dropping the lowest cards.
Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable

from . import gate
from .gate import Screen
from .memory_format import ATX_HEADING
from .relevance import BODY_TIER, OUT
from .route import Candidate, Options, Routing, first_by_id
from .safety import scan

OMITTED_CARDS = 5


class Entry:
    """A memory printed in the pack, as a body or as a one-line card."""

    __slots__ = ("cand", "shown", "selected", "requires", "body")

    def __init__(
        self,
        cand: Candidate,
        shown: str = "card",
        selected: bool = True,
        requires: list[str] | None = None,
        body: str = "",
    ) -> None:
        self.cand = cand
        self.shown = shown  # body | card
        self.selected = selected  # False for an omitted candidate listed as a card
        self.requires = requires or []
        self.body = body

    @property
    def card_text(self) -> str:
        return one_line_of(self.cand.row, self.body)


def one_line_of(row, body: str) -> str:
    """What a memory says in one line (a card, a generated Cursor rule's `description`): its
    directive, else its summary, the first line of text of its checked ``body`` (what the rule
    says: an adoption audit's converted rules, with no directive, had cards saying only "API
    errors"), its title, the first heading of the body (an author who starts at `###`), its id."""
    return row["directive"] or row["summary"] or _first_text(body) or row["title"] or _first_heading(body) or row["id"]


FIRST_TEXT_CHARS = 200  # a longer first line is no one-line summary: the title says it then
_LIST_MARK = "-*+> \t"


def _first_text(body: str) -> str:
    """The body's first line of text (`first_text_line`); "" when it is longer than
    FIRST_TEXT_CHARS (never cut: a card says a whole line or nothing)."""
    text = first_text_line(body)
    return text if len(text) <= FIRST_TEXT_CHARS else ""


def first_text_line(body: str) -> str:
    """The body's first line of text, no heading, fence, rule, table or comment, its list or quote
    mark left out; "" when there is none."""
    lines = body.splitlines()
    in_fence = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        text = line.strip().lstrip(_LIST_MARK).strip()
        rule = not set(line.strip()) - {"=", "-", "*", "_", " "}  # a setext underline or a horizontal rule
        setext = index + 1 < len(lines) and set(lines[index + 1].strip()) in ({"="}, {"-"})
        if in_fence or rule or setext or ATX_HEADING.match(line) or text.startswith(("|", "<!--")):
            continue
        return text
    return ""


def _first_heading(body: str) -> str:
    heading = next(filter(None, map(ATX_HEADING.match, body.splitlines())), None)
    return heading.group(2).strip() if heading else ""


class Skipped:
    __slots__ = ("cand", "reason", "label")

    def __init__(self, cand: Candidate, reason: str, label: str) -> None:
        self.cand = cand
        self.reason = reason  # hash | safety
        self.label = label  # what the SKIPPED line says; never the offending text


class Pack:
    def __init__(
        self, entries: list[Entry], skipped: list[Skipped], omitted: list[Candidate], total_related: int
    ) -> None:
        self.entries = entries
        self.skipped = skipped
        self.omitted = omitted
        self.total_related = total_related

    @property
    def selected(self) -> list[Entry]:
        return [e for e in self.entries if e.selected]

    @property
    def card_ids(self) -> list[str]:
        return [e.cand.id for e in self.entries if e.shown == "card"]


def screen_text(digest: str, text: str) -> str | None:
    """The plain screen; `state.ScreenCache` remembers verdicts by digest."""
    return scan(text)


# Whether a pack is within its limits: the token budget of its text, a host's cap.
Fits = Callable[[Pack], bool]


class PackOptions:
    def __init__(
        self,
        limit: int | None = 8,
        expand_top: int = 3,
        layered: bool = True,
        budget: int | None = None,
        exclude: frozenset[str] = frozenset(),
        screen: Screen = screen_text,
    ) -> None:
        self.limit = limit  # None: no cap (--all)
        self.expand_top = expand_top
        self.layered = layered  # False for --full, --all and --disclosure full
        self.budget = budget  # tokens of the whole text (`select.within_tokens`); None: no budget
        self.exclude = exclude  # keys already delivered (hooks)
        self.screen = screen


def build_pack(routing: Routing, options: Options, pack_options: PackOptions, fits: Fits | None = None) -> Pack:
    """The pack of a routing; with ``fits``, cut down until it fits (`fit_pack`)."""
    members = [c for c in with_prerequisites(routing, options, pack_options.limit) if c.key not in pack_options.exclude]
    entries, skipped = _checked_entries(members, pack_options.screen)
    for skip in skipped:
        skip.cand.omission = skip.reason
    member_keys = {c.key for c in members}
    cut = [c for c in routing.pack if c.key not in member_keys and c.omission]  # no room beside prerequisites
    omitted = cut + [c for c in routing.omitted if c.key not in member_keys] + [s.cand for s in skipped]
    admitted = {c.key for c in routing.admitted}
    # A prerequisite pulled in is related too: the count line never says "5 of 3".
    pulled_in = sum(1 for c in members if c.key not in admitted)
    pack = Pack(entries, skipped, omitted, routing.total_related + pulled_in)
    _disclose(pack, routing, pack_options)
    if fits is not None:
        fit_pack(pack, fits)
    return pack


def with_prerequisites(routing: Routing, options: Options, limit: int | None) -> list[Candidate]:
    """Each packed memory preceded by its visible prerequisites (transitively), within the limit. A
    prerequisite the task routed to on its own is that candidate, as judged (dry-run shows its relevance)."""
    out: list[Candidate] = []
    keys: set[str] = set()
    judged = {c.key: c for c in routing.admitted}
    for cand in routing.pack:
        if cand.key in keys:
            continue
        if limit is not None and len(out) >= limit:  # full: no need to look its prerequisites up
            cand.omission = "limit"
            continue
        needed = [judged.get(p.key, p) for p in _prerequisites(cand, options) if p.key not in keys]
        if out and limit is not None and len(out) + len(needed) + 1 > limit:
            cand.omission = "limit"
            continue
        if limit is not None and len(needed) >= limit:
            needed = needed[len(needed) + 1 - limit :]  # a chain longer than the pack: its nearest links
        for prereq in needed:
            prereq.omission = None
            prereq.prerequisite_of = cand.id
            out.append(prereq)
            keys.add(prereq.key)
        out.append(cand)
        keys.add(cand.key)
    return out


def _prerequisites(cand: Candidate, options: Options) -> list[Candidate]:
    """Depth-first, deepest first; cycles end where they close. Iterative: chains can be long. An id
    resolves as `load --id` resolves it: a workspace memory stands for the global one of its id, even
    where a global memory depends on it (and an archived one there opts the project out of it)."""
    order: list[Candidate] = []
    visiting = {cand.id}
    stack = [iter(_depends_on(cand))]
    expanding: list[Candidate | None] = [None]  # the prerequisite whose own ones each stack level lists
    while stack:
        dst = next(stack[-1], None)
        if dst is None:
            stack.pop()
            done = expanding.pop()
            if done is not None:
                order.append(done)
        elif dst not in visiting:
            visiting.add(dst)
            prereq = first_by_id(cand.layer.stack, dst, options)
            if prereq is not None and prereq.omission is None:
                stack.append(iter(_depends_on(prereq)))
                expanding.append(prereq)
    return order


def _depends_on(cand: Candidate) -> list[str]:
    rows = cand.layer.conn.execute(
        "SELECT dst FROM edges WHERE src = ? AND kind = 'depends_on' ORDER BY dst", (cand.id,)
    )
    return [row[0] for row in rows]


def requires_of(cand: Candidate) -> list[str]:
    return gate.requires(_depends_on(cand))


def checked_body(cand: Candidate, screen: Screen = screen_text) -> tuple[str, Skipped | None]:
    """The stored body if the memory passes the output gate (fields, hash, safety screen), else
    "" and why it is skipped."""
    body, reason, label = gate.check_memory(cand.layer.conn, cand.row, screen, cand.layer.rebuild)
    return (body, None) if reason is None else ("", Skipped(cand, reason, label))


def _checked_entries(members: list[Candidate], screen: Screen) -> tuple[list[Entry], list[Skipped]]:
    entries, skipped = [], []
    for cand in members:
        body, skip = checked_body(cand, screen)
        if skip:
            skipped.append(skip)
            continue
        entries.append(Entry(cand, body=body, requires=requires_of(cand)))
    return entries, skipped


def _disclose(pack: Pack, routing: Routing, pack_options: PackOptions) -> None:
    """Bodies for the best hit and the confident ones (their tier, and their prerequisites), up to
    expand_top; cards for the rest; then the best candidates left out, at most OMITTED_CARDS, each
    checked like a body."""
    if not pack_options.layered:
        for entry in pack.entries:
            entry.shown = "body"
        return
    # routed hits by their tier, and the best one whatever its tier (a pack never holds cards
    # alone); memories chosen by tag or path (no relevance judged) are bodies
    confident = {c.key for i, c in enumerate(routing.pack) if i == 0 or c.judged is None or c.tier == BODY_TIER}
    # The routed memories take the bodies first, then the prerequisites of those shown as bodies: a
    # prerequisite printed before its dependent must not leave that dependent a card.
    bodies: set[str] = set()
    for entry in sorted(pack.entries, key=lambda entry: entry.cand.dependent_key is not None):
        dependent = entry.cand.dependent_key
        wanted = entry.cand.key in confident if dependent is None else dependent in bodies
        if wanted and len(bodies) < pack_options.expand_top:
            bodies.add(entry.cand.key)
    for entry in pack.entries:
        entry.shown = "body" if entry.cand.key in bodies else "card"
    if routing.pack and not (pack.entries or pack.skipped):
        return  # a hook session holds every memory the task routed to: no cards of others beside none
    listed = {e.cand.key for e in pack.entries} | {s.cand.key for s in pack.skipped} | pack_options.exclude
    for cand in (c for c in routing.admitted if c.key not in listed and c.tier != OUT):
        if len(pack.entries) - len(pack.selected) >= OMITTED_CARDS:
            break
        body, skip = checked_body(cand, pack_options.screen)
        if skip is None:
            pack.entries.append(Entry(cand, selected=False, body=body))
        else:  # said, as for a body: a tampered or flagged memory is never dropped unseen
            cand.omission = skip.reason
            pack.skipped.append(skip)


def _demotion_rank(entries: list[Entry]) -> Callable[[Entry], tuple[int, bool]]:
    """A body's rank when bodies become cards: its place in the pack, but a prerequisite, printed
    before its dependent, ranks just below that dependent, for whose sake it is in the pack."""
    place = {entry.cand.key: i for i, entry in enumerate(entries)}

    def rank(entry: Entry) -> tuple[int, bool]:
        dependent = entry.cand.dependent_key
        return (place[dependent], True) if dependent in place else (place[entry.cand.key], False)

    return rank


def fit_pack(pack: Pack, fits: Fits) -> None:
    """Demote bodies to cards from the lowest-ranked up until the pack fits, then give its body back
    to each demoted one that still fits, best first (a long memory at the top leaves room for the
    short ones below it); only when the cards alone do not fit are the lowest cards dropped. How
    many to demote, and how many entries to keep, are each found by halving (a pack fits the better
    the fewer bodies or entries it holds): one render a step, where one render an entry made
    `load --all --budget-tokens` of 2,500 memories take a minute."""
    rank = _demotion_rank(pack.entries)
    lowest_first = sorted((e for e in pack.entries if e.shown == "body"), key=rank, reverse=True)

    def demote(count: int) -> Pack:
        for place, entry in enumerate(lowest_first):
            entry.shown = "card" if place < count else "body"
        return pack

    demoting = _fewest(lambda count: fits(demote(count)), len(lowest_first))
    if demoting is not None:
        demote(demoting)
        _give_bodies_back(pack, sorted(lowest_first[:demoting], key=rank), fits)
        return
    demote(len(lowest_first))
    entries = pack.entries
    dropping = _fewest(lambda count: _fits_without(pack, entries, count, fits), len(entries))
    pack.entries = entries[: len(entries) - (len(entries) if dropping is None else dropping)]
    for dropped in reversed(entries[len(pack.entries) :]):
        if dropped.selected:
            dropped.cand.omission = "budget"
            pack.omitted.append(dropped.cand)


def _fits_without(pack: Pack, entries: list[Entry], count: int, fits: Fits) -> bool:
    """Whether the pack fits without its last ``count`` entries (an empty pack always does)."""
    pack.entries = entries[: len(entries) - count]
    return not pack.entries or fits(pack)


def _fewest(fits_at: Callable[[int], bool], most: int) -> int | None:
    """The smallest count from 0 to ``most`` at which ``fits_at`` holds, None when it holds at none;
    found by halving, as it holds for every count above one where it holds."""
    if fits_at(0):  # most packs fit as they are: one render
        return 0
    if not fits_at(most):
        return None
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        if fits_at(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _give_bodies_back(pack: Pack, demoted: list[Entry], fits: Fits) -> None:
    """Each demoted entry, best first, a body again where the pack still fits; a prerequisite only
    beside its dependent's body (`_disclose`)."""
    bodies = {e.cand.key for e in pack.entries if e.shown == "body"}
    for entry in demoted:
        dependent = entry.cand.dependent_key
        if dependent is not None and dependent not in bodies:
            continue
        entry.shown = "body"
        if fits(pack):
            bodies.add(entry.cand.key)
        else:
            entry.shown = "card"
