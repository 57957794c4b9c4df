"""Read flow, last step: a pack as agent text, dry-run text or JSON (stdlib only).

The strings here are the output contract of DESIGN.md section 6.
"""

from __future__ import annotations

import json

from . import gate, relevance, terms
from .index import RETIRED
from .pack import Entry, Pack, first_text_line
from .route import Candidate, Routing


def count_line(pack: Pack) -> str:
    return f"loaded {len(pack.selected)} memory files / {pack.total_related} total related memories"


def card_line(entry: Entry) -> str:
    stale = " (stale)" if entry.cand.stale else ""
    return f"- {entry.cand.id} [{entry.cand.row['type']}] {entry.card_text}{stale}"


def body_block(entry: Entry) -> str:
    """The heading, `requires:`, the directive (not again when the body opens with it), the body."""
    row = entry.cand.row
    lines = [f"### {row['id']} [{row['type']}, {row['authority']}]{_retired(entry.cand)}"]
    if entry.requires:
        lines.append(f"requires: {', '.join(entry.requires)}")
    lines.append(with_directive(row["directive"], entry.body))
    return "\n".join(lines)


def _retired(cand: Candidate) -> str:
    """Why no load would show it, on the heading of a body asked for by id (`load --id`, MCP `fetch`):
    archived, superseded or past its `valid_until`."""
    if cand.omission != "lifecycle":
        return ""
    lifecycle = cand.row["lifecycle"]
    return f" ({lifecycle})" if lifecycle in RETIRED else f" (expired {cand.row['valid_until']})"


def with_directive(directive: str, body: str) -> str:
    """The body as an agent reads it: the directive first, unless the body already opens with it
    (its first line of text, after headings and blank lines, starts with the directive, give or
    take its closing punctuation)."""
    if not directive or _opens_with(body, directive):
        return body
    return f"{directive}\n\n{body}" if body else directive


def _opens_with(body: str, directive: str) -> bool:
    first = first_text_line(body).strip("*_")
    return bool(first) and _folded(first).startswith(_folded(directive).rstrip(".;:!"))


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def skipped_line(path: str, label: str) -> str:
    return f"SKIPPED {path}: {label}"


FETCH_BY_COMMAND = "engram load --id"


def render_text(pack: Pack, fetch_with: str = FETCH_BY_COMMAND) -> str:
    """The agent-facing pack: count line, bodies, cards, SKIPPED lines, fetch line (``fetch_with``:
    how the agent gets a card's body: the command, or the MCP server's `fetch` tool)."""
    blocks = [count_line(pack)]
    for entry in pack.entries:
        blocks.append(body_block(entry) if entry.shown == "body" else card_line(entry))
    blocks += [skipped_line(source_path(s.cand), s.label) for s in pack.skipped]
    if pack.card_ids:
        blocks.append(f"fetch: {fetch_with} {','.join(pack.card_ids)}")
    return gate.text("\n".join(blocks) + "\n")


def source_path(cand: Candidate) -> str:
    prefix = "" if cand.scope == "workspace" else "global:"
    return f"{prefix}{gate.path(cand.row['rel'])}"


def reasons(cand: Candidate, routing: Routing) -> list[str]:
    """Why a candidate matched: anchors and their fields, then the multipliers applied."""
    out = [f"prerequisite of {cand.prerequisite_of} (depends_on)"] if cand.prerequisite_of else []
    if out and cand.judged is None:  # pulled in alone: no word of the task to show
        return out
    matched = cand.matched_fields(routing.scoring).items()
    out += [f"{routing.label(routing.scoring[index])} -> {', '.join(fields)}" for index, fields in matched]
    if cand.judged and cand.clause_score > cand.score:  # packed for one clause of a task of several
        out.append(f"leads a clause of the task: relevance {cand.judged.clause:.2f} to it")
    out += [f"x{factor:g} {name}" for name, factor in cand.multipliers]
    return out


def omission_text(cand: Candidate, routing: Routing) -> str:
    """An omitted candidate's reason, then its relevance, its most specific words of the task and
    where it holds them, and what it lacks, when it was judged:
    ``(limit) relevance 0.52, holds login in body, test in tags; lacks kafka, zebra``, the reason
    and the number said once where they are one (``(relevance 0.12) holds ...``)."""
    if cand.held_alone is not None:  # failing the anchor rule: what it holds, and what the rule asks
        index, fields = cand.held_alone
        return gate.line(
            f"({cand.omission}) holds only {routing.label(routing.scoring[index])}, in {'/'.join(fields)}; a task this "
            "long needs two of its words, or one in the id, tags, directive or applies_to"
        )
    if cand.judged is None:
        return f"({cand.omission}){_retired(cand)}"  # (lifecycle) (expired 2025-01-01)
    lacks = cand.lacks(routing)
    held = _holds(cand, routing)
    if cand.omission == "relevance":
        judged = f"(relevance {cand.relevance:.2f})" + (f" {held}" if held else "")
    else:
        judged = f"({cand.omission}) relevance {cand.relevance:.2f}" + (f", {held}" if held else "")
    return gate.line(judged + (f"; lacks {', '.join(lacks)}" if lacks else ""))


def _holds(cand: Candidate, routing: Routing) -> str:
    """``holds login in body, test in tags``: the candidate's most specific words of the task ("" for none)."""
    holds = ", ".join(f"{word} in {'/'.join(fields)}" for word, fields in _held(cand, routing))
    return f"holds {holds}" if holds else ""


HELD_LISTED = 3  # words an omitted candidate holds, named in dry-run


def _held(cand: Candidate, routing: Routing) -> list[tuple[str, list[str]]]:
    """The omitted candidate's most specific words of the task, as dry-run names them, with the
    fields holding each."""
    held = sorted(cand.matched_fields(routing.scoring).items(), key=lambda item: -routing.idf[item[0]])
    return [(routing.label(routing.scoring[index]), fields) for index, fields in held[:HELD_LISTED]]


def off_topic_text(routing: Routing) -> str:
    """Why an off-topic task packs nothing, as dry-run says it (and a hook with ENGRAM_DEBUG=1)."""
    return (
        f"the task as a whole is judged not about this folder (on-topic {_on_topic_value(routing)}; "
        f"{_off_topic_reason(routing)})"
    )


def _off_topic_reason(routing: Routing) -> str:
    """Why an off-topic task packs nothing: the task's relevance to the folder is under the
    decision's bar, or what would pack holds the task's words in bodies alone, weakly."""
    if routing.thin is not None:
        return f"what would pack holds its words in bodies alone, best relevance {routing.thin:.2f}, so nothing packs"
    return f"under {routing.topic_bar:.2f}, so nothing packs"


def _on_topic_value(routing: Routing) -> str:
    """The task's relevance, with the digits that show on which side of the bar it is (0.798 under 0.80)."""
    digits = 2
    while digits < 4 and (round(routing.on_topic, digits) >= routing.topic_bar) != (
        routing.on_topic >= routing.topic_bar
    ):
        digits += 1
    return f"{routing.on_topic:.{digits}f}"


def _kept_reason(routing: Routing) -> str:
    """Why a task whose relevance is under the bar packs all the same (`relevance.on_topic_because`);
    "" when its own relevance made it on-topic, it is off-topic, or nothing was decided (--all)."""
    if routing.off_topic or routing.topic_reason in ("", relevance.TASK_TOPIC):
        return ""
    cand = routing.topic_by
    name, by = (gate.memory_id(cand.id), f"relevance {cand.relevance:.2f}") if cand else ("", "")
    why = {
        relevance.IMPLIED_TOPIC: f"{name} is named or tagged for a technology the task implies, or its applies_to "
        f"holds a path the task writes ({by}), and that decides",
        relevance.NAMED_TOPIC: f"{name} is named for a word of the task ({by}): in a folder of fewer than "
        f"{relevance.SMALL_FOLDER} memories, from {relevance.SURE_NAMED:.2f} that decides",
        relevance.SURE_TOPIC: f"{name} alone is relevant enough to decide ({by}; from {relevance.SURE_SMALL:.2f} in a "
        f"folder of fewer than {relevance.SMALL_FOLDER} memories)",
        relevance.FEW_TOPIC: "the folder holds too few memories for the task decision: its candidates decide",
        relevance.TRIGGER_TOPIC: f"the task writes a trigger phrase of {name} ({by}), and that decides",
    }[routing.topic_reason]
    rest = "" if routing.topic_reason in relevance.TASK_DECIDED else "; the other candidates are listed, not packed"
    return f"under {routing.topic_bar:.2f}, but {why}{rest}"


def miss_reasons(routing: Routing, pack: Pack, ids: list[str]) -> list[str]:
    """For a benchmark miss: what the routing said of each memory named (expected, or loaded
    although the task is off-topic), as dry-run says it."""
    packed = {e.cand.id: e.cand for e in pack.selected}
    found = {c.id: c for c in [*routing.admitted, *routing.omitted]}
    why = _off_topic_reason(routing) if routing.off_topic else _kept_reason(routing)
    lines = [f"on-topic {_on_topic_value(routing)}" + (f" ({why})" if why else "")]
    for memory_id in ids:
        cand, name = packed.get(memory_id) or found.get(memory_id), gate.memory_id(memory_id)
        if cand is None:
            lines.append(f"{name}: holds no word of the task")
        elif cand.prerequisite_of:
            lines.append(f"{name}: packed as a prerequisite of {gate.memory_id(cand.prerequisite_of)} (depends_on)")
        elif memory_id not in packed:
            lines.append(f"{name}: {omission_text(cand, routing)}")
        else:
            held = _holds(cand, routing)
            lines.append(
                f"{name}: packed; relevance {cand.relevance:.2f}, tier {cand.tier}" + (f", {held}" if held else "")
            )
    return [gate.line(line) for line in lines]


UNKNOWN_LISTED = 8  # words of the task no memory holds, named in dry-run


def render_dry_run(routing: Routing, pack: Pack) -> str:
    lines = [f"Routed memories ({len(pack.selected)} of {pack.total_related})"]
    anchors = ", ".join(map(routing.label, routing.anchors)) or "(none)"
    unused = f" (and {routing.unused_words} later words, not anchors)" if routing.unused_words else ""
    lines.append(f"anchors: {anchors}{unused}")
    if about_memories := terms.about_memories(routing.task):  # a tag holding one is never found by it
        lines.append(f"not looked for (words about memories themselves): {', '.join(about_memories)}")
    unknown = [routing.label(a) for a, weight in zip(routing.scoring, routing.idf) if not weight and not a.pair]
    if unknown:  # what an author would add to the memory that should have matched
        more = f" and {len(unknown) - UNKNOWN_LISTED} more" if len(unknown) > UNKNOWN_LISTED else ""
        lines.append(f"no memory holds: {', '.join(unknown[:UNKNOWN_LISTED])}{more}")
    if routing.admitted and not routing.pack and routing.off_topic:
        lines.append(f"off-topic: {off_topic_text(routing)}")
    elif routing.pack and (kept := _kept_reason(routing)):
        lines.append(f"on-topic {_on_topic_value(routing)}: {kept}")
    for position, entry in enumerate(pack.selected, 1):
        cand = entry.cand
        # a prerequisite was never judged against the task: its reason line says what it is
        judged = f"relevance {cand.relevance:.2f}" if cand.judged else "not judged"
        lines.append(f"{position}. {cand.id} [{cand.scope}] score {cand.score:.3f} {judged} ({entry.shown})")
        lines += [f"   {reason}" for reason in reasons(cand, routing)]
    for cand in _omitted_once(pack):
        lines.append(f"omitted: {gate.memory_id(cand.id)} [{cand.scope}] {omission_text(cand, routing)}")
    if routing.unlisted:
        lines.append(f"omitted: {routing.unlisted} more, lower scored (not listed)")
    lines += [skipped_line(source_path(s.cand), s.label) for s in pack.skipped]
    if routing.narrow_tags:
        lines.append(f"Narrow with tags: {', '.join(gate.names(routing.narrow_tags))}")
    return gate.text("\n".join(lines) + "\n")


def _omitted_once(pack: Pack) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for cand in pack.omitted:
        if cand.key not in seen and cand.omission:
            seen.add(cand.key)
            out.append(cand)
    return out


def fetch_command(index_file: str | None) -> str:
    """How the agent gets a card's body from the command line: from the index `--index` named, if any."""
    if index_file is None:
        return FETCH_BY_COMMAND
    import shlex  # only here: the hook path never names an index file

    return f"engram load --index {shlex.quote(index_file)} --id"


def render_json(routing: Routing, pack: Pack, fetch_with: str = FETCH_BY_COMMAND) -> str:
    carded = {e.cand.key for e in pack.entries if not e.selected}
    payload = {
        "selected": len(pack.selected),
        "total_related": pack.total_related,
        "on_topic": round(routing.on_topic, 4),
        "entries": [_entry_json(e, routing) for e in pack.selected],
        "omitted": [_omitted_json(c, routing, c.key in carded) for c in _omitted_once(pack)],
        "omitted_unlisted": routing.unlisted,
        "skipped": [
            {"id": gate.memory_id(s.cand.id), "path": source_path(s.cand), "reason": s.reason, "label": s.label}
            for s in pack.skipped
        ],
        "narrow_tags": gate.names(routing.narrow_tags),
        "fetch": f"{fetch_with} {','.join(pack.card_ids)}" if pack.card_ids else None,
    }
    return json.dumps(gate.cleaned(payload), indent=2, ensure_ascii=False) + "\n"


def render_fetched_json(fetched: list[tuple[str, str, str]]) -> str:
    """`load --json --id`: each id asked for, how it is shown (body, hidden, skipped, missing) and
    the text `load --id` prints for it."""
    payload = {"fetched": [{"id": gate.memory_id(i), "shown": shown, "text": text} for i, shown, text in fetched]}
    return json.dumps(gate.cleaned(payload), indent=2, ensure_ascii=False) + "\n"


def _entry_json(entry: Entry, routing: Routing) -> dict:
    cand = entry.cand
    out = {
        "id": cand.id,
        "scope": cand.scope,
        "type": cand.row["type"],
        "authority": cand.row["authority"],
        "score": round(cand.score, 4),
        "relevance": cand.judged_relevance,
        "reasons": reasons(cand, routing),
        "shown": entry.shown,
        "stale": cand.stale,
        "requires": entry.requires,
        "directive": cand.row["directive"],
    }
    if entry.shown == "body":
        out["text"] = entry.body
    return out


def _omitted_json(cand: Candidate, routing: Routing, carded: bool) -> dict:
    out: dict = {"id": gate.memory_id(cand.id), "scope": cand.scope, "reason": cand.omission}
    if cand.judged is not None:
        out["relevance"] = cand.judged_relevance
        out["holds"] = dict(_held(cand, routing))
        out["lacks"] = cand.lacks(routing)
    elif cand.held_alone is not None:
        index, fields = cand.held_alone
        out["holds"] = {routing.label(routing.scoring[index]): fields}
    if carded:
        out["shown"] = "card"
    return out
