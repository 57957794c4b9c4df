"""Merge a helper-written list of technology signatures into `engram/signatures.py` and `engram/signature_tables.py`.

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

The parts of every identifier written as code (`target_link_libraries`, `on_delete` of
`on_delete=models.CASCADE`, `op.add_column`, and the last part of a dotted one: `register_class` of
`bpy.utils.register_class`) also go to `CODE`, matched only where a text writes them as code
(`signatures.in_code`: common words joined as code are specific), each of two words or more, one
of them no filler, none of its technology's name, none that a bundled rule named or tagged for
another technology writes as code (`res.status`, `database_url`: any stack's code), and none made
of a receiver and a member any code writes (`data.map`, `session.get`: `generic_code`), in the
table already or added.

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

import yaml

from benchmarks.sets import CURSORRULES, ROOT
from engram import signature_tables, signatures, terms

NAMES_FILE = ROOT / "engram" / "signatures.py"  # NAMES and EVERYDAY_NAMES
TABLE_FILE = ROOT / "engram" / "signature_tables.py"  # SIGNATURES, FIRST_WORDS and CODE
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
# Variables any code names so, and operations any API has: `data.map`, `session.get` and
# `router.post` are every stack's code, whatever one stack's list gave them to (`data.map` is no
# Haskell, `session.get` no SQLAlchemy). Written from general knowledge, before any task was read.
# fmt: off
GENERIC_RECEIVERS = frozenset({
    "data", "session", "r", "c", "router", "context", "task", "model", "db", "res", "req", "request", "response",
    "app", "ctx", "args", "output", "server", "build", "test", "page", "client", "result", "item", "obj", "self",
    "this", "x", "e", "err", "event", "options", "config", "json", "process", "system", "web", "auth", "op", "api",
    "http", "file", "user",
})
GENERIC_MEMBERS = frozenset({
    "map", "filter", "get", "post", "put", "delete", "patch", "run", "read", "write", "find", "first", "json", "body",
    "send", "on", "use", "exec", "execute", "query", "save", "load", "open", "close", "start", "stop", "init",
    "create", "update", "insert", "remove", "add", "set", "push", "pop", "call", "apply", "bind", "then", "catch",
    "value", "data", "text", "status", "all", "each", "head", "options",
})
# fmt: on
NAMES_KEY = "_names"
Tables = tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]  # SIGNATURES, CODE


def bundled_df() -> Counter[str]:
    """Per index term, how many bundled rules hold it."""
    df: Counter[str] = Counter()
    for path in sorted(CURSORRULES.rglob("*.md")):
        df.update(terms.term_set(path.read_text(encoding="utf-8")))
    return df


def bundled_code(names: dict[str, tuple[str, ...]]) -> list[tuple[set[str], set[str]]]:
    """Per bundled rule, the technologies its id and tags name and the identifiers it writes as code."""
    by_term: dict[str, set[str]] = defaultdict(set)
    for tech, aliases in names.items():
        for term in aliases:
            by_term[term].add(tech)
    out = []
    for path in sorted(CURSORRULES.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        front = yaml.safe_load(text.split("---")[1])
        called = [str(front.get("id", "")), *map(str, front.get("tags") or [])]
        name = set(name_terms(called)) | {word.terms[0] for label in called for word in terms.words(label)}
        out.append((set().union(*(by_term.get(term, set()) for term in name)), set(signatures.code_identifiers(text))))
    return out


def shared_code(code: dict[str, set[str]], rules: list[tuple[set[str], set[str]]]) -> set[str]:
    """The identifiers a bundled rule about another technology also writes as code (`res.status`
    under Express, in a NestJS rule): any stack's code, not one's."""
    return {
        identifier
        for named, written in rules
        if named
        for identifier in written & code.keys()
        if not named & code[identifier]
    }


def generic_code(identifier: str) -> bool:
    """A receiver and a member that any stack's code writes (GENERIC_RECEIVERS, GENERIC_MEMBERS),
    joined by a dot; a `::` path (`web::Data`) is one language's own."""
    parts = identifier.split(".")
    return len(parts) == 2 and parts[0] in GENERIC_RECEIVERS and parts[1] in GENERIC_MEMBERS


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
    tables: Tables,
    lists: list[dict],
    df: Counter[str],
    ordinary: set[str],
    rules: list[tuple[set[str], set[str]]],
) -> tuple[dict[str, tuple[str, ...]], Tables, Counter[str]]:
    """The names with the lists' new technologies, the tables (SIGNATURES, CODE) with their
    signatures and code identifiers added, and how many were left out for each reason."""
    names = dict(names)
    for written in lists:
        names.update(
            {tech: name_terms(aliases) for tech, aliases in written.get(NAMES_KEY, {}).items() if tech not in names}
        )
    added: dict[str, set[str]] = defaultdict(set)
    code: dict[str, set[str]] = defaultdict(set)
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
                if reason != "empty":
                    for written_as_code in code_parts(identifier, names[tech]):
                        code[written_as_code].add(tech)
    shared = shared_code(code, rules)
    left_out["code of other stacks too"] += len(shared)
    code = {identifier: techs for identifier, techs in code.items() if identifier not in shared}
    generic = {identifier for identifier in {*code, *tables[1]} if generic_code(identifier)}
    left_out["any stack's code"] += len(generic)
    kept = {identifier: techs for identifier, techs in tables[1].items() if identifier not in generic}
    code = {identifier: techs for identifier, techs in code.items() if identifier not in generic}
    return names, (_added(tables[0], added, left_out), _added(kept, code, left_out)), left_out


def _added(
    table: dict[str, tuple[str, ...]], added: dict[str, set[str]], left_out: Counter[str]
) -> dict[str, tuple[str, ...]]:
    """The table with the added keys' technologies after those it has, none past MAX_TECHNOLOGIES."""
    out = dict(table)
    for key, techs in added.items():
        known = out.get(key, ())
        both = known + tuple(sorted(techs - set(known)))
        if len(both) > MAX_TECHNOLOGIES:
            left_out["too many technologies"] += 1
        else:
            out[key] = both
    return out


def code_parts(identifier: str, own_name: tuple[str, ...]) -> list[str]:
    """The parts of an identifier written as code that `CODE` keeps (above): each part as
    `signatures.code_identifiers` finds it in a text, whole, and the last part of a dotted one."""
    out = []
    for whole in signatures.CODE_IDENTIFIER.findall(identifier):
        last = signatures.CODE_JOINT.split(whole.lower())[-1]
        for candidate in dict.fromkeys([whole.lower(), last]):
            written = terms.words(candidate)
            if (
                len(written) >= 2
                and any(not _filler(word) for word in written)
                and not any(word.terms[0] in own_name or word.text in own_name for word in written)
                and signatures.CODE_IDENTIFIER.fullmatch(candidate)
            ):
                out.append(candidate)
    return out


def everyday_names(names: dict[str, tuple[str, ...]], ordinary: set[str]) -> list[str]:
    """The name terms that are an English word as the index stems it (`spring`, `hibernat`): a task
    writing one may mean the word, so it implies no other name of the technology."""
    stems = {terms.stem(word) for word in ordinary} | ordinary
    return sorted({term for aliases in names.values() for term in aliases if term in stems})


def rendered_names(names: dict[str, tuple[str, ...]], everyday: list[str]) -> str:
    """The NAMES and EVERYDAY_NAMES literals of `signatures`."""
    lines = ["NAMES: dict[str, tuple[str, ...]] = {"]
    lines += [f"    {tech!r}: {terms_!r}," for tech, terms_ in sorted(names.items())]
    lines += ["}", "EVERYDAY_NAMES: frozenset[str] = frozenset({"]
    lines += _wrapped(f"{term!r}," for term in everyday)
    return "\n".join([*lines, "})"]) + "\n"


def rendered_tables(tables: Tables) -> str:
    """The SIGNATURES, FIRST_WORDS and CODE literals of `signature_tables`, signatures grouped by
    their first technology."""
    table, code = tables
    by_tech: dict[str, list[str]] = defaultdict(list)
    for signature, techs in table.items():
        by_tech[techs[0]].append(f"    {signature!r}: {techs!r},")
    lines = ["SIGNATURES: dict[str, tuple[str, ...]] = {"]
    for tech in sorted(by_tech):
        lines += [f"    # {tech}", *by_tech[tech]]
    longest: dict[str, int] = {}
    for signature in table:
        first, length = signature.split()[0], len(signature.split())
        longest[first] = max(longest.get(first, 0), length)
    lines += ["}", "FIRST_WORDS: dict[str, int] = {"]
    lines += _wrapped(f"{word!r}: {length}," for word, length in sorted(longest.items()))
    lines += ["}", "CODE: dict[str, tuple[str, ...]] = {"]
    lines += _wrapped(f"{identifier!r}: {techs!r}," for identifier, techs in sorted(code.items()))
    return "\n".join([*lines, "}"]) + "\n"


def _wrapped(items) -> list[str]:
    """Items as indented rows of at most LINE characters."""
    rows, row = [], ""
    for item in items:
        if row and len(row) + 1 + len(item) > LINE:
            rows.append(row)
            row = ""
        row = f"{row} {item}" if row else f"    {item}"
    return [*rows, row] if row else rows


def rewrite(source: str, first_literal: str, literals: str) -> str:
    """The source with its literals from ``first_literal`` to `# fmt: on` replaced by ``literals``."""
    start = source.index(first_literal)
    end = source.index("# fmt: on", start)
    return source[:start] + literals + source[end:]


def rewrite_names(source: str, names: dict[str, tuple[str, ...]], everyday: list[str]) -> str:
    return rewrite(source, "NAMES: dict[str, tuple[str, ...]] = {", rendered_names(names, everyday))


def rewrite_tables(source: str, tables: Tables) -> str:
    return rewrite(source, "SIGNATURES: dict[str, tuple[str, ...]] = {", rendered_tables(tables))


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
    tables = (signature_tables.SIGNATURES, signature_tables.CODE)
    names, tables, left_out = merged(
        signatures.NAMES, tables, lists, bundled_df(), ordinary, bundled_code(signatures.NAMES)
    )
    everyday = everyday_names(names, ordinary)
    NAMES_FILE.write_text(rewrite_names(NAMES_FILE.read_text(encoding="utf-8"), names, everyday), encoding="utf-8")
    TABLE_FILE.write_text(rewrite_tables(TABLE_FILE.read_text(encoding="utf-8"), tables), encoding="utf-8")
    added = len(tables[0]) - len(signature_tables.SIGNATURES)
    print(
        f"{len(names) - len(signatures.NAMES)} technologies, {added} signatures and"
        f" {len(tables[1]) - len(signature_tables.CODE)} code identifiers added, {len(tables[0])} and"
        f" {len(tables[1])} in all; left out: {dict(left_out)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
