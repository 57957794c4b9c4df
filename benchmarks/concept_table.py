"""Write the table of `engram/concepts.py` from a helper-written thesaurus.

    python benchmarks/concept_table.py [benchmarks/concepts.json [benchmarks/technology-concepts.json]]

The thesaurus maps a concept of everyday project work, as a team names or tags a rule
(`release`, `migrations`, `colors`), to its other names ("aliases") and to the words a task uses
when it is about the concept without naming it ("signals": "new version", "nullable column",
"high contrast"). It was written from general software knowledge by a helper who saw neither the
code nor any labelled task (docs/routing.md, "Concepts"). Kept: each concept's name terms (the
name and aliases glued as ids and tags are: `error-handling` -> errorhandl), and its signals of
two words, at least one of them no stopword, as the stems `terms.words` makes of them. Single-word
signals are left out: measured, they were too often about something else ("migrate" a modal,
"spend" a budget, "overflow" of Stack Overflow). The table between the `fmt` markers is rewritten
in place, with the concepts each technology of `signatures` is an instance of (`vitest` ->
testing, unit-testing; `ollama` -> llm), from a second helper-written file. Development only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engram import terms

ROOT = Path(__file__).resolve().parents[1]
TABLE_FILE = ROOT / "engram" / "concepts.py"
THESAURUS = ROOT / "benchmarks" / "concepts.json"
TECHNOLOGY_CONCEPTS = ROOT / "benchmarks" / "technology-concepts.json"
START, END = "# fmt: off\n", "# fmt: on\n"


def name_terms(concept: str, aliases: list[str]) -> tuple[str, ...]:
    """The terms an id or tag naming the concept is indexed as: its words glued into one, as an id
    writing the name as one word holds it (`oncall`, `fulltextsearch`), and, for a name of three
    words or more, its adjacent pairs glued, as an id writing it with separators holds them
    (`terms.glued`: `full-text-search` -> fulltext, textsearch; two words glue as one already)."""
    out: list[str] = []
    for name in (concept, *aliases):
        written = terms.words(name)
        whole = terms.stem("".join(word.text for word in written))
        for term in [whole, *(terms.glued(name) if len(written) > 2 else [])]:
            if term and term not in out:
                out.append(term)
    return tuple(out)


def signal_key(signal: str) -> str | None:
    """The stems of a signal of two words, at least one no stopword; else None."""
    written = terms.words(signal)
    if len(written) != 2 or any(word.cjk for word in written) or all(map(terms.is_stopword, written)):
        return None
    return " ".join(word.terms[0] for word in written)


def tables(thesaurus: dict) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    names: dict[str, tuple[str, ...]] = {}
    signals: dict[str, list[str]] = {}
    for concept, spec in sorted(thesaurus.items()):
        names[concept] = name_terms(concept, spec.get("aliases", []))
        for key in filter(None, map(signal_key, spec.get("signals", []))):
            if concept not in signals.setdefault(key, []):
                signals[key].append(concept)
    return names, {key: tuple(concepts) for key, concepts in sorted(signals.items())}


def technology_table(mapping: dict[str, list[str]], names: dict) -> dict[str, tuple[str, ...]]:
    """Per technology of `signatures.NAMES`, the concepts of ``names`` it is an instance of."""
    from engram import signatures

    unknown = {tech for tech in mapping if tech not in signatures.NAMES} | {
        concept for concepts in mapping.values() for concept in concepts if concept not in names
    }
    if unknown:
        raise SystemExit(f"not a technology or a concept of the tables: {', '.join(sorted(unknown))}")
    return {tech: tuple(concepts) for tech, concepts in sorted(mapping.items()) if concepts}


def rewrite(source: str, names: dict, signals: dict, technologies: dict) -> str:
    before, _, rest = source.partition(START)
    _, _, after = rest.partition(END)
    lines = ["NAMES: dict[str, tuple[str, ...]] = {"]
    lines += [f"    {concept!r}: {value!r}," for concept, value in names.items()]
    lines += ["}", "SIGNALS: dict[str, tuple[str, ...]] = {"]
    lines += [f"    {key!r}: {value!r}," for key, value in signals.items()]
    lines += ["}", "TECHNOLOGIES: dict[str, tuple[str, ...]] = {"]
    lines += [f"    {tech!r}: {value!r}," for tech, value in technologies.items()]
    lines += ["}"]
    return before + START + "\n".join(lines) + "\n" + END + after


def main(argv: list[str] | None = None) -> int:
    paths = [Path(arg) for arg in argv or []] + [THESAURUS, TECHNOLOGY_CONCEPTS][len(argv or []) :]
    names, signals = tables(json.loads(paths[0].read_text(encoding="utf-8")))
    technologies = technology_table(json.loads(paths[1].read_text(encoding="utf-8")), names)
    source = TABLE_FILE.read_text(encoding="utf-8")
    TABLE_FILE.write_text(rewrite(source, names, signals, technologies), encoding="utf-8")
    print(f"{len(names)} concepts, {len(signals)} two-word signals, {len(technologies)} technologies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
