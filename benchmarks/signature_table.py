"""Merge a helper-written list of technology signatures into `engram/signatures.py`.

    python benchmarks/signature_table.py LIST.json [LIST.json ...] [--words FILE ...]

A list maps a technology to identifiers that tell an expert at once which technology a text is
about (`setState`, `select_related`, `cargo clippy`), written from general knowledge by someone
who saw neither the code nor any labelled task (docs/routing.md). A technology not yet in
`signatures.NAMES` comes with its aliases under "_names" (`{"_names": {"vercel": ["vercel"]}}`),
indexed as ids and tags glue a name's words (`cloudflare-workers` -> cloudflareworker). Each
identifier is turned into the words `terms.words` makes of it and kept unless it is:

- **common**: every word a stopword, two letters or fewer, or held by COMMON_DF or more of the
  bundled rules ("start date", `web::Data`): ordinary prose would imply the technology; but not a
  message of PHRASE_WORDS words or more ("working outside of request context"), specific as a whole;
- **its own name**: a word of the technology's own name terms (`alembic upgrade head`): a task
  that names the technology gets no implied anchor for it anyway;
- **ordinary**: a single word of an English word list (`--words`; Debian's wamerican,
  wamerican-insane and wbritish-insane by default: `hardhat` is a tool and a helmet), or one that
  is any technology's name (`rails` among Ruby's: the task names that technology).

A signature that would name more than MAX_TECHNOLOGIES is left as it was. The names, the table,
its first-words index and EVERYDAY_NAMES (the name terms the word lists hold, as the index stems
them: a task writing `spring` or `hibernate` may mean the word, `signatures.renamed`) are
rewritten in place; `tests/test_terms.py` checks the form. Merging an empty list (`{}`) rewrites
only what the word lists decide.
Development only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sets import CURSORRULES, ROOT
from engram import signatures, terms

TABLE_FILE = ROOT / "engram" / "signatures.py"
COMMON_DF = 8  # of the 257 bundled rules
# A pasted message of this many words, that many of them no stopword, is specific as a whole even
# when each word is common ("working outside of request context"): prose does not repeat it.
PHRASE_WORDS = 4
PHRASE_CONTENT_WORDS = 3
MAX_TECHNOLOGIES = 3
WORD_LISTS = (
    "/usr/share/dict/words",
    "/usr/share/dict/american-english-insane",
    "/usr/share/dict/british-english-insane",
)
LINE = 120
NAMES_KEY = "_names"


def bundled_df() -> Counter[str]:
    """Per index term, how many bundled rules hold it."""
    df: Counter[str] = Counter()
    for path in sorted(CURSORRULES.rglob("*.md")):
        df.update(terms.term_set(path.read_text(encoding="utf-8")))
    return df


def word_list(paths: list[str]) -> set[str]:
    out: set[str] = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="ignore") as handle:
            out |= {word.strip().lower() for word in handle if word.strip().isalpha()}
    return out


def name_terms(aliases: list[str]) -> tuple[str, ...]:
    """A technology's aliases as the index holds them in ids and tags: each one's words glued."""
    glued = (terms.stem("".join(word.text for word in terms.words(alias))) for alias in aliases)
    return tuple(dict.fromkeys(term for term in glued if len(term) >= 2))


def signature_of(
    tech: str, identifier: str, names: dict[str, tuple[str, ...]], df: Counter[str], ordinary: set[str]
) -> tuple[str, str]:
    """(the signature as the table writes it, why it is left out or "")."""
    written = _trimmed(terms.words(identifier))
    texts = [word.text for word in written]
    signature = " ".join(texts)
    if not written or any(word.cjk for word in written):
        return signature, "empty"
    if all(_common(word, df) for word in written) and not _phrase(written):
        return signature, "common"
    if any(word.terms[0] in names[tech] or word.text in names[tech] for word in written):
        return signature, "own name"
    if len(texts) == 1 and (texts[0] in ordinary or any(written[0].terms[0] in other for other in names.values())):
        return signature, "ordinary"
    return signature, ""


def _trimmed(written: list[terms.Word]) -> list[terms.Word]:
    """A message's words without stopwords at either end (its leading "The" would only make the
    lookup start at every "the" of a task), unless that leaves less than a phrase: "would you like
    to rebuild them now" is specific, "rebuild" is not; shorter signatures stay whole (`q-btn`)."""
    core = _core(written)
    return core if len(core) >= PHRASE_WORDS else written


def _core(written: list[terms.Word]) -> list[terms.Word]:
    start, end = 0, len(written)
    while start < end and terms.is_stopword(written[start]):
        start += 1
    while end > start and terms.is_stopword(written[end - 1]):
        end -= 1
    return written[start:end]


def _common(word: terms.Word, df: Counter[str]) -> bool:
    return _filler(word) or df[word.terms[0]] >= COMMON_DF


def _filler(word: terms.Word) -> bool:
    return terms.is_stopword(word) or len(word.text) <= 2


def _phrase(written: list[terms.Word]) -> bool:
    core = _core(written)
    return len(core) >= PHRASE_WORDS and sum(not _filler(word) for word in core) >= PHRASE_CONTENT_WORDS


def merged(
    names: dict[str, tuple[str, ...]],
    table: dict[str, tuple[str, ...]],
    lists: list[dict],
    df: Counter[str],
    ordinary: set[str],
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], Counter[str]]:
    """The names with the lists' new technologies, the table with their signatures added, and how
    many were left out for each reason."""
    names = dict(names)
    for written in lists:
        names.update(
            {tech: name_terms(aliases) for tech, aliases in written.get(NAMES_KEY, {}).items() if tech not in names}
        )
    added: dict[str, set[str]] = defaultdict(set)
    left_out: Counter[str] = Counter()
    for written in lists:
        for tech, identifiers in written.items():
            if tech == NAMES_KEY:
                continue
            if tech not in names:
                left_out["unknown technology"] += len(identifiers)
                continue
            for identifier in identifiers:
                signature, reason = signature_of(tech, identifier, names, df, ordinary)
                if reason:
                    left_out[reason] += 1
                else:
                    added[signature].add(tech)
    out = dict(table)
    for signature, techs in added.items():
        known = out.get(signature, ())
        both = known + tuple(sorted(techs - set(known)))
        if len(both) > MAX_TECHNOLOGIES:
            left_out["too many technologies"] += 1
        else:
            out[signature] = both
    return names, out, left_out


def everyday_names(names: dict[str, tuple[str, ...]], ordinary: set[str]) -> list[str]:
    """The name terms that are an English word as the index stems it (`spring`, `hibernat`): a task
    writing one may mean the word, so it implies no other name of the technology."""
    stems = {terms.stem(word) for word in ordinary} | ordinary
    return sorted({term for aliases in names.values() for term in aliases if term in stems})


def rendered(names: dict[str, tuple[str, ...]], table: dict[str, tuple[str, ...]], everyday: list[str]) -> str:
    """The NAMES, SIGNATURES, FIRST_WORDS and EVERYDAY_NAMES literals, signatures grouped by their
    first technology."""
    by_tech: dict[str, list[str]] = defaultdict(list)
    for signature, techs in table.items():
        by_tech[techs[0]].append(f"    {signature!r}: {techs!r},")
    lines = ["NAMES: dict[str, tuple[str, ...]] = {"]
    lines += [f"    {tech!r}: {terms_!r}," for tech, terms_ in sorted(names.items())]
    lines += ["}", "SIGNATURES: dict[str, tuple[str, ...]] = {"]
    for tech in sorted(by_tech):
        lines += [f"    # {tech}", *by_tech[tech]]
    longest: dict[str, int] = {}
    for signature in table:
        first, length = signature.split()[0], len(signature.split())
        longest[first] = max(longest.get(first, 0), length)
    lines += ["}", "FIRST_WORDS: dict[str, int] = {"]
    lines += _wrapped(f"{word!r}: {length}," for word, length in sorted(longest.items()))
    lines += ["}", "EVERYDAY_NAMES: frozenset[str] = frozenset({"]
    lines += _wrapped(f"{term!r}," for term in everyday)
    return "\n".join([*lines, "})"]) + "\n"


def _wrapped(items) -> list[str]:
    """Items as indented rows of at most LINE characters."""
    rows, row = [], ""
    for item in items:
        if row and len(row) + 1 + len(item) > LINE:
            rows.append(row)
            row = ""
        row = f"{row} {item}" if row else f"    {item}"
    return [*rows, row] if row else rows


def rewrite(
    source: str, names: dict[str, tuple[str, ...]], table: dict[str, tuple[str, ...]], everyday: list[str]
) -> str:
    start = source.index("NAMES: dict[str, tuple[str, ...]] = {")
    end = source.index("# fmt: on", start)
    return source[:start] + rendered(names, table, everyday) + source[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lists", nargs="+", type=Path, help="JSON: technology -> identifiers")
    parser.add_argument("--words", action="append", help="an English word list (one word a line)")
    args = parser.parse_args(argv)
    paths = args.words or list(WORD_LISTS)
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        print(f"signature_table: no word list at {', '.join(missing)} (Debian: wamerican-insane, wbritish-insane)")
        return 2
    lists = [json.loads(path.read_text(encoding="utf-8")) for path in args.lists]
    ordinary = word_list(paths)
    names, table, left_out = merged(signatures.NAMES, signatures.SIGNATURES, lists, bundled_df(), ordinary)
    source = rewrite(TABLE_FILE.read_text(encoding="utf-8"), names, table, everyday_names(names, ordinary))
    TABLE_FILE.write_text(source, encoding="utf-8")
    added = len(table) - len(signatures.SIGNATURES)
    print(
        f"{len(names) - len(signatures.NAMES)} technologies and {added} signatures added, {len(table)} in all;"
        f" left out: {dict(left_out)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
