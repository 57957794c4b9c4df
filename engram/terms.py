"""Text to terms: the one tokenizer shared by the compiler and the read path.

Latin text is case-folded, stripped of diacritics (with the Vietnamese
``đ`` -> ``d``), and lightly stemmed. CJK runs (Han, Hiragana, Katakana,
Hangul) are split by script and turned into overlapping character bigrams,
because FTS5's unicode61 keeps a whole CJK run as one token. Stdlib only:
this module sits on the hook path.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import namedtuple

from .lazyre import LazyPattern

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Container, Iterable
    from typing import AnyStr

TOKENIZER_VERSION = "engram-terms-12"

_WORD = re.compile(r"[^\W_]+")
_CJK_SPLIT = LazyPattern(
    r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3007\U00020000-\U0002ffff]+"
    r"|[\u3040-\u309f]+|[\u30a0-\u30ff\u31f0-\u31ff]+"
    r"|[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+)"
)
_HAS_CJK = LazyPattern(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_HIRAGANA = LazyPattern(r"^[\u3040-\u309f]+$")
# Chinese function characters that never start or end a content word here;
# CJK runs are cut at them on both sides so a question's grammar is not a term.
_ZH_FUNCTION_CHARS = LazyPattern("[的了是吗呢吧啊么和与及或把被让给向在都就也而这那哪怎什我你他她它们请]")

ENGLISH_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "else",
        "ever",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "like",
        "me",
        "more",
        "most",
        "much",
        "must",
        "my",
        "myself",
        "need",
        "needs",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "via",
        "want",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "make",
        "made",
        "keep",
        "take",
        "new",
        "way",
        "well",
        "work",
        "written",
        "come",
        "current",
        "makes",
        "making",
        "keeps",
        "keeping",
        "kept",
        "takes",
        "taking",
        "took",
        "wants",
        "wanted",
        "getting",
        "comes",
        "coming",
        "came",
        "don",
        "doesn",
        "didn",
        "isn",
        "aren",
        "wasn",
        "weren",
        "hasn",
        "haven",
        "hadn",
        "won",
        "wouldn",
        "shouldn",
        "couldn",
        "mustn",
        "needn",
        "ll",
        "ve",
    ]  # the last: what contractions leave once the apostrophe splits them
)
# Vietnamese function words, written folded (the tokenizer folds before this check).
VIETNAMESE_STOPWORDS = frozenset(
    [
        "cac",
        "cua",
        "va",
        "la",
        "cho",
        "trong",
        "mot",
        "nhung",
        "duoc",
        "voi",
        "khi",
        "thi",
        "ma",
        "se",
        "da",
        "dang",
        "tu",
        "ra",
        "vao",
        "nhu",
        "nay",
        "cung",
        "hay",
        "hoac",
        "neu",
        "cung",
        "con",
        "rat",
        "nhieu",
        "lam",
        "sao",
        "the",
        "nao",
        "gi",
        "toi",
        "ban",
        "chung",
        "minh",
        "ve",
        "theo",
        "truoc",
        "sau",
        "cai",
        "nhau",
        "bang",
        "khong",
        "co",
        "de",
    ]
)
# Japanese and Chinese function bigrams (kana-only runs are already dropped).
CJK_STOP_BIGRAMS = frozenset(
    [
        "如何",
        "怎样",
        "什么",
        "为什",
        "哪些",
        "可以",
        "需要",
        "应该",
        "使用",
        "进行",
        "一个",
        "这个",
        "那个",
        "就是",
        "何",
        "方法",
        "场合",
        # modal and function words a team's Chinese rules are full of ("不要写 Options API", "必须",
        # "所有"), as everyday questions are ("要不要带伞", "孩子上学必须穿校服吗"): a multilingual
        # team's audit found these loading rules for the weather
        "不要",
        "要不",
        "必须",
        "所有",
        "怎么",
        "如果",
        "因为",
        "所以",
        "但是",
        "还是",
        "已经",
        "没有",
        "不能",
        "是否",
        "一下",
        "一些",
        "我们",
        "你们",
        "他们",
        "可能",
        "的话",
        "时候",
        "这样",
        "这些",
        "那些",
        "为了",
        "或者",
        "不是",
    ]
)
# The generic memory words in Japanese and Chinese (simplified and traditional or Japanese
# kanji: 记忆 and 記憶 "memory", 规则 and 規則 "rule"), as the bigrams the tokenizer makes of them.
CJK_GENERIC_BIGRAMS = frozenset(
    [
        "记忆",
        "記憶",
        "规则",
        "規則",
        "知识",
        "技能",
        "任务",
        "上下",
        "下文",
        "メモ",
        "モリ",
        "ルー",
        "ール",
        "知識",
        "スキ",
        "キル",
        "タス",
        "スク",
        "コン",
        "ンテ",
        "テキ",
        "キス",
        "スト",
    ]
)
GENERIC_MEMORY_WORDS = frozenset(
    [
        "agent",
        "agents",
        "approved",
        "content",
        "context",
        "durable",
        "engram",
        "example",
        "future",
        "knowledge",
        "memories",
        "memory",
        "rule",
        "rules",
        "skill",
        "skills",
        "task",
        "tasks",
        "touch",
        "type",
        "types",
        "use",
        "used",
        "uses",
        "using",
    ]
)
TYPE_WORDS = frozenset({"workflow", "workflows"})
# Developer shorthand in a query for a word memories spell out: the anchor matches either form.
ABBREVIATIONS = {
    "msg": "message", "msgs": "messages", "repo": "repository", "repos": "repositories",
    "env": "environment", "envs": "environments", "db": "database", "dbs": "databases",
    "k8s": "kubernetes", "auth": "authentication", "authn": "authentication", "authz": "authorization",
    "cfg": "configuration", "config": "configuration", "configs": "configurations", "deps": "dependencies",
    "perf": "performance", "docs": "documentation", "impl": "implementation", "pkg": "package",
    "pkgs": "packages", "func": "function", "fn": "function", "args": "arguments", "params": "parameters",
    "prod": "production", "js": "javascript", "ts": "typescript", "py": "python", "btn": "button",
    "img": "image", "imgs": "images", "nav": "navigation", "i18n": "internationalization",
    "postgres": "postgresql", "pg": "postgresql", "mongo": "mongodb", "dotnet": "net", "golang": "go",
    "ext": "extension", "exts": "extensions", "lib": "library", "libs": "libraries", "dir": "directory",
    "dirs": "directories", "var": "variable", "vars": "variables", "obj": "object", "str": "string",
    "bool": "boolean", "req": "request", "resp": "response", "err": "error", "errs": "errors",
    "util": "utility", "utils": "utilities", "dev": "development", "async": "asynchronous",
    "spec": "specification", "specs": "specifications", "infra": "infrastructure", "sec": "security",
    "vuln": "vulnerability", "vulns": "vulnerabilities", "cred": "credential", "creds": "credentials",
    "pwd": "password", "tf": "terraform", "gql": "graphql", "perms": "permissions", "txn": "transaction",
    "ws": "websocket", "mgmt": "management", "notif": "notification", "notifs": "notifications",
}  # fmt: skip

_MEMO_LIMIT = 200_000


class _Memo(dict):
    """A dict that computes a missing value on first use and keeps it (up to a bound): the
    words and characters of a corpus repeat."""

    def __init__(self, compute) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: str):
        value = self.compute(key)
        if len(self) < _MEMO_LIMIT:
            self[key] = value
        return value


_ASCII_BYTES = bytes(range(0x80))
# ASCII letters lowered, digits kept, every other byte a space: on plain text (`_is_plain`) one bytes
# `translate` and `split` give the folded `_WORD` runs, several times faster than `str.lower`
# (on non-ASCII text) and the regex.
_LOWER_BREAKS = (  # a constant: digits at 0x30, A-Z at 0x41 (lowered), a-z at 0x61
    b" " * 0x30
    + b"0123456789"
    + b" " * 7
    + b"abcdefghijklmnopqrstuvwxyz"
    + b" " * 6
    + b"abcdefghijklmnopqrstuvwxyz"
    + b" " * 0x85
)


def _is_plain_break(char: str) -> bool:
    """A character that ends words and that folding keeps as it is, next to any neighbour:
    punctuation, symbols, box drawing, emoji. It has no decomposition and no lower case, and is
    no combining mark (the only kind that composes with a neighbour)."""
    return (
        not char.isalnum()
        and unicodedata.decomposition(char) == ""
        and not unicodedata.category(char).startswith("M")
        and char.lower() == char
    )


_PLAIN_BREAK = _Memo(_is_plain_break)


def _is_plain(text: str) -> bool:
    """ASCII but for plain breaks (`_is_plain_break`), none of them CJK."""
    return text.isascii() or _plain_breaks(non_ascii_chars(text))


def _plain_breaks(chars: str) -> bool:
    return all(map(_PLAIN_BREAK.__getitem__, chars)) and not _HAS_CJK.search(chars)


def occurrences(text: AnyStr, needles: Iterable[AnyStr]) -> list[int]:
    """Where each needle starts in text, needle after needle: one `find` (a scan in C) per
    occurrence, far cheaper on long text than a regex of the needles, tried at every character."""
    found = []
    for needle in needles:
        index = text.find(needle)
        while index != -1:
            found.append(index)
            index = text.find(needle, index + 1)
    return found


def non_ascii_chars(text: str) -> str:
    """The distinct non-ASCII characters of text (few, even in long text)."""
    utf8 = text.encode("utf-8", "surrogatepass")
    return "".join(set(utf8.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")))


def _lowered_runs(plain: str) -> list[str]:
    """The `_WORD` runs of plain text, lowered."""
    return plain.encode("utf-8", "surrogatepass").translate(_LOWER_BREAKS).decode("ascii").split()


def fold(text: str) -> str:
    """Lowercase, drop Latin diacritics, map đ to d; CJK is left as it is."""
    text = _named_symbols(text)
    if _is_plain(text):
        return text.lower()
    # Line by line, since most lines are plain: no normalization, lowercasing or mark crosses a newline.
    return "\n".join(map(_fold_line, text.split("\n")))


def _fold_line(line: str) -> str:
    if _is_plain(line):
        return line.lower()
    line = unicodedata.normalize("NFKC", line).lower().replace("đ", "d")
    # Only the Latin combining block: kana voicing marks (U+3099, U+309A) must survive.
    return unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", line)))


_DOT_NAME = re.compile(r"\.(js|net)\b", re.IGNORECASE)
# Names whose symbols the word split would drop, leaving a one-letter stopword (C#, C++) or
# nothing (N+1). Each pattern starts at its symbol and looks back for the letter: a pattern that
# starts at a letter, or at either of two symbols, makes every `fold` several times slower.
_HASH_NAME = re.compile(r"#(?<=[cfCF]#)")
_PLUS_NAME = re.compile(r"\+(?:\+(?<=[cC]\+\+)|1(?<=[nN]\+1))")
SYMBOL_NAMES = {"c#": "csharp", "f#": "fsharp", "c++": "cpp", "n+1": "nplus1"}


def _named_symbols(text: str) -> str:
    """``.js`` and ``.net`` glued to their word ("Next.js" and "nextjs" are the same word, so are
    "ASP.NET" and "aspnet"), and `SYMBOL_NAMES` as words ("C++17" -> "cpp 17")."""
    text = _DOT_NAME.sub(r"\1", text)
    spans = [m.span() for m in _HASH_NAME.finditer(text)] if "#" in text else []
    if "+" in text:
        spans += [m.span() for m in _PLUS_NAME.finditer(text)]
    pieces: list[str] = []
    last = 0
    for symbol, end in sorted(spans):
        start = symbol - 1  # the letter
        if start >= last and not _joined(text, start, end):
            pieces += (text[last:start], SYMBOL_NAMES[text[start:end].lower()], " ")
            last = end
    return "".join(pieces) + text[last:] if pieces else text


def _joined(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is part of a longer word ("abc#", "c++x", "n+12"); a version may
    follow "++" ("C++17")."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    version = after.isdecimal() and text[end - 1] == "+"
    return before.isalnum() or before in "_+#" or (after.isalnum() and not version) or after in "_+#"


_LATIN_MARKS = re.compile("[\u0300-\u036f]")


def stem(word: str) -> str:
    """A light English stemmer: plurals, -ing, -ed and a final -e.

    Deliberately conservative: the same function runs on both sides, so
    consistency matters more than linguistic accuracy.
    """
    return _STEMS[word]


def _has_vowel(text: str) -> bool:
    return any(c in "aeiouy" for c in text)


def _undouble(word: str) -> str:
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]
    return word


def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6 and _has_vowel(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ied") and len(word) > 4:  # retried, queried: the stem of retries and queries
        word = word[:-3] + "y"
    elif word.endswith("ed") and not word.endswith("eed") and len(word) >= 5 and _has_vowel(word[:-2]):
        word = _undouble(word[:-2])
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


_STEMS = _Memo(_stem)


def _cjk_chunks(run: str) -> list[str]:
    """Split a run with CJK characters into same-script chunks, without kana-only grammar."""
    chunks: list[str] = []
    for part in _CJK_SPLIT.split(run):
        if not part:
            continue
        if _HIRAGANA.match(part):
            continue  # particles and inflections, not content words
        if _HAS_CJK.search(part):
            chunks.extend(c for c in _ZH_FUNCTION_CHARS.split(part) if c)
        else:
            chunks.append(part)
    return chunks


# Vietnamese syllables as they are typed without their marks (không -> khong, được -> duoc), none
# an English word, a common code token or two letters (`roi`, `gui`, `ten`, `them`, `da` left out): three
# different ones make a text Vietnamese typed plainly (`devwords.foreign_words`).
# fmt: off
PLAIN_VIETNAMESE = frozenset({
    'khong', 'duoc', 'nhung', 'trong', 'minh', 'nhu', 'cach', 'lam', 'sao', 'cua', 'voi', 'thi', 'khi',
    'nay', 'nao', 'vay', 'nhau', 'giup', 'phai', 'biet', 'dung', 'chay', 'khac', 'cung', 'dang', 'viet',
    'xoa', 'nhan', 'tren', 'duoi', 'vao', 'neu', 'nen', 'hoi', 'chuong', 'trinh', 'lieu', 'ket', 'moi',
    'nhieu', 'mot', 'cac', 'nguoi', 'gium', 'xin', 'chao', 'loi', 'cho', 'thu', 'trang', 'tien',
    'hien', 'luc', 'lai', 'toi', 'duong', 'hieu', 'dau', 'sai', 'dinh', 'nghia', 'kieu', 'bien', 'goi',
    'tra', 'cai', 'bao', 'gio', 'nhat', 'hon', 'qua', 'thay', 'doi', 'xay', 'nho',
})
# fmt: on
PLAIN_VIETNAMESE_WORDS = 3


def plain_vietnamese(words: list[Word]) -> bool:
    """Whether a text's words are Vietnamese typed without marks (`PLAIN_VIETNAMESE`)."""
    return len({word.text for word in words}.intersection(PLAIN_VIETNAMESE)) >= PLAIN_VIETNAMESE_WORDS


def has_cjk(text: str) -> bool:
    return bool(_HAS_CJK.search(text))


def cjk_grams(chunk: str) -> list[str]:
    """Overlapping bigrams of a CJK chunk (the character itself for one-character chunks)."""
    if len(chunk) == 1:
        return [chunk]
    return [chunk[i : i + 2] for i in range(len(chunk) - 1)]


_KATAKANA_WORD = LazyPattern(r"^[\u30a0-\u30ff\u31f0-\u31ff]+$")
_HANGUL_WORD = LazyPattern(r"^[\uac00-\ud7af]+$")
KATAKANA_RUN = 3  # consecutive bigrams of a long katakana word that hold it inside a compound
KATAKANA_LONG = 5  # characters


def held_by_any_bigram(word: Word) -> bool:
    """Whether any bigram of a CJK word is a part of it (Chinese characters, kanji), as opposed to
    a katakana or Korean word, which `holds_enough` judges."""
    return not (_KATAKANA_WORD.match(word.text) or _HANGUL_WORD.match(word.text))


def holds_enough(word: Word, held: list[bool]) -> bool:
    """Whether a memory holding these of a CJK word's bigrams (``held``, in the word's order) holds
    the word. A katakana word is a loanword whose endings many share (ース of リリース and ケース,
    ション of マイグレーション and ファッション): it needs all its bigrams, or, from KATAKANA_LONG
    characters, KATAKANA_RUN consecutive ones (マイグレーション inside データベースマイグレーション).
    A Korean word carries its particles and endings after its stem (배포해줘, 리액트에서): it needs its
    first bigram. Chinese characters and kanji carry meaning one by one: any bigram is a part."""
    if _KATAKANA_WORD.match(word.text):
        long_enough = len(word.text) >= KATAKANA_LONG
        return all(held) or (
            long_enough and any(all(held[i : i + KATAKANA_RUN]) for i in range(len(held) - KATAKANA_RUN + 1))
        )
    if _HANGUL_WORD.match(word.text):
        return held[0]
    return True


class Word(namedtuple("Word", "text terms cjk")):
    """A word as the user wrote it (``text``), and the index terms it becomes (``terms``)."""

    __slots__ = ()


def words(text: str) -> list[Word]:
    """Split text into words with their terms, in order; stopwords are kept here."""
    out: list[Word] = []
    for run in _WORD.findall(fold(text)):
        if run.isascii() or not _HAS_CJK.search(run):
            out.append(Word(run, (stem(run),), False))
            continue
        for chunk in _cjk_chunks(run):
            if _HAS_CJK.search(chunk):
                out.append(Word(chunk, tuple(cjk_grams(chunk)), True))
            else:
                out.append(Word(chunk, (stem(chunk),), False))
    return out


_CAMEL = LazyPattern(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+|[A-Z]+(?![a-z]))+[A-Za-z0-9]*\b")
# An acronym's plural is one part (`PDFs`, `URLs` of `fetchURLs`), not an acronym cut before a word
# (`PD` + `Fs`): its letters would be words no memory holds.
_CAMEL_PART = LazyPattern(r"[A-Z]{2,}s(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


# Products whose names are written in PascalCase but are one word: their parts name other
# subjects (`java` of JavaScript, `git` of GitHub). Technology names are known to `signatures`.
PRODUCT_NAMES = frozenset({
    "actionscript", "applescript", "bigquery", "bitbucket", "chatgpt", "clickhouse", "cockroachdb",
    "cocoapods", "coffeescript", "cosmosdb", "datadog", "devops", "digitalocean", "github", "gitlab",
    "gitops", "hashicorp", "intellij", "ios", "ipad", "iphone", "javascript", "jetbrains", "linkedin",
    "macos", "mlops", "nuget", "oauth", "onedrive", "openapi", "opensearch", "pagerduty", "paypal",
    "playstation", "powerpoint", "pypi", "scipy", "sharepoint", "sonarqube", "stackoverflow", "testng",
    "tiktok", "vscode", "wechat", "whatsapp", "youtube", "zeromq",
})  # fmt: skip


def identifier_parts(text: str, names: Container[str] = frozenset()) -> list[Word]:
    """The words inside camelCase and PascalCase identifiers (`LazyInitializationException` ->
    lazy, initialization, exception): a memory may spell out what an error name runs together.
    An identifier that is a product name (JavaScript) or whose stem is one of ``names`` (the
    technologies: PostgreSQL) is a name, not split."""
    out = []
    for identifier in _CAMEL.findall(text):
        parts = _CAMEL_PART.findall(identifier)
        whole = identifier.lower()
        if len(parts) > 1 and whole not in PRODUCT_NAMES and stem(whole) not in names:
            out += [Word(part.lower(), (stem(part.lower()),), False) for part in parts]
    return out


def is_stopword(word: Word) -> bool:
    if word.cjk:
        return all(t in CJK_STOP_BIGRAMS for t in word.terms)
    return _latin_stopword(word.text)


_LATIN_STOPWORDS = ENGLISH_STOPWORDS | VIETNAMESE_STOPWORDS


def _latin_stopword(text: str) -> bool:
    return len(text) < 2 or text in _LATIN_STOPWORDS


def _index_term(word: str) -> str:
    """A word's term in the index, or "" for a stopword."""
    return "" if _latin_stopword(word) else _stem(word)


_TERM_OF = _Memo(_index_term)


def index_terms(text: str) -> str:
    """The space-joined term stream the FTS table stores for a text field, then the terms of its
    hyphenated compounds written as one word (`hyphen_compounds`)."""
    stream = _term_stream(text)
    joined = " ".join(filter(None, map(_TERM_OF.__getitem__, hyphen_compounds(text)))) if "-" in text else ""
    return f"{stream} {joined}" if joined else stream


def _term_stream(text: str) -> str:
    """The terms of the text's words, in order."""
    if _is_plain(text):  # most text: folding it only lowers it
        runs = _lowered_runs(_named_symbols(text))  # the rest of `fold`
    else:
        folded = fold(text)
        others = non_ascii_chars(folded)
        if _HAS_CJK.search(others):
            return " ".join(t for w in words(text) if not is_stopword(w) for t in w.terms)
        runs = _lowered_runs(folded) if _plain_breaks(others) else _WORD.findall(folded)
    return " ".join(filter(None, map(_TERM_OF.__getitem__, runs)))


def hyphen_compounds(text: str) -> list[str]:
    """Compounds of two runs of ASCII letters written with a hyphen, as one word ("front-end" ->
    frontend, "e-mail" -> email), as a task may spell them: a query's "front end" or "front-end" is
    glued to `frontend` already (`glue`), so either spelling finds the other. Of five letters and
    more; a chain such as "step-by-step" is none. Found from each hyphen between letters (a scan in
    C), not by a regex tried at every character, which costs compile three times as much."""
    out = []
    compound_at = _COMPOUND.match  # looked up once: a lazy pattern's attributes cost a call each
    hyphen = text.find("-", 1)
    while hyphen != -1:
        if text[hyphen - 1].isalpha() and text[hyphen + 1 : hyphen + 2].isalpha():
            start = hyphen - 1
            while start and text[start - 1].isalpha():
                start -= 1
            before = text[start - 1] if start else " "
            compound = None if before.isalnum() or before in "_-" else compound_at(text, start)
            if compound and compound.end() - start > 5:
                out.append(compound.group().replace("-", "").lower())
        hyphen = text.find("-", hyphen + 1)
    return out


_COMPOUND = LazyPattern(r"[A-Za-z]+-[A-Za-z]+(?![\w-])")


def term_set(text: str) -> set[str]:
    return set(index_terms(text).split())


def glue(first: Word, second: Word) -> str | None:
    """The term of two words written as one name, as ids and tags often write them ("spring
    boot" -> springboot, "vue 3" -> vue3): a word of letters and the next, of letters or a number."""
    if first.cjk or second.cjk or not first.text.isalpha():
        return None
    return stem(first.text + second.text) if second.text.isalpha() or second.text.isdigit() else None


def name_terms(names: list[str]) -> str:
    """`index_terms` of ids or tags, with each name's words also glued (`glue`): "svelte-5" gives
    svelte5 as well, so a query's "svelte 5" finds it however either side writes it."""
    return " ".join(filter(None, (term for name in names for term in (_term_stream(name), *glued(name)))))


def glued(name: str) -> list[str]:
    """A name's adjacent words glued (`glue`), its stopwords left out: "drag-and-drop" -> dragdrop,
    "full-text-search" -> fulltext, textsearch."""
    written = [w for w in words(name) if not is_stopword(w) or w.text.isdigit()]
    return [term for term in (glue(a, b) for a, b in zip(written, written[1:])) if term]


def about_memories(text: str) -> list[str]:
    """The words of a text that are words about memories themselves (GENERIC_MEMORY_WORDS), each
    once: no task is searched for them."""
    return list(dict.fromkeys(word.text for word in words(text) if word.text in GENERIC_MEMORY_WORDS))


def meaningful(word: Word) -> Word | None:
    """The word as a query anchor, or None for a stopword or a generic memory word.

    A CJK word keeps only its meaningful bigrams: 提高记忆力 must not match every memory
    because 记忆 ("memory") is in it. A one-character CJK word is none, as a one-letter word is
    none: in Japanese it is what a run cut at kana leaves of an inflected verb or adjective (決 of
    決める, 良 of 良くする), in Chinese a fragment between function characters.
    """
    if is_stopword(word) or _is_small_number(word):
        return None
    if not word.cjk:
        if word.text in GENERIC_MEMORY_WORDS:
            return None
        full = ABBREVIATIONS.get(word.text)
        return Word(word.text, (*word.terms, stem(full)), False) if full else word
    if len(word.text) == 1:  # the stem of an inflected word (決める, 良く), or a fragment: no subject
        return None
    kept = tuple(t for t in word.terms if t not in CJK_GENERIC_BIGRAMS and t not in CJK_STOP_BIGRAMS)
    return Word(word.text, kept, True) if kept else None


def _is_small_number(word: Word) -> bool:
    """One or two digits: a count, a date or a version, which means something only glued to its name
    (`drupal 11`, `vue 3`: `route.anchors_of`); alone ("late November, 11 days") it is no subject.
    Longer numbers stay anchors: `404`, `8080`, `2038`."""
    return word.text.isdigit() and len(word.text) <= 2


def estimate_tokens(text: str) -> int:
    """ASCII characters / 4 plus one per non-ASCII character, rounded up."""
    if text.isascii():
        return math.ceil(len(text) / 4)
    ascii_count = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_count / 4 + (len(text) - ascii_count))
