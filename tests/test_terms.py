"""The shared tokenizer: folding, CJK bigrams, light stemming, stopwords, token estimate."""

from __future__ import annotations

import math
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from engram import concepts, devwords, route, signature_tables, signatures, terms


def anchors_of(query: str) -> list[route.Anchor]:
    return route.anchors_of(query)[0]


def _terms(text: str) -> list[str]:
    return terms.index_terms(text).split()


def test_light_stemming_joins_inflections():
    for group in (
        ("deploy", "deploys", "deploying", "deployed"),
        ("test", "tests", "testing"),
        ("migration", "migrations"),
        ("policy", "policies"),
        ("cache", "caches", "caching"),
    ):
        assert len({terms.stem(word) for word in group}) == 1, group


def test_vietnamese_folds_diacritics_and_d_stroke():
    assert _terms("lớp phụ thuộc") == _terms("lop phu thuoc") == ["lop", "phu", "thuoc"]
    assert _terms("Đường Nẵng") == ["duong", "nang"]


def test_kana_voicing_marks_survive_folding():
    assert terms.fold("ガイド") == "ガイド"


def test_cjk_runs_become_bigrams_split_by_script():
    assert _terms("トークン") == ["トー", "ーク", "クン"]
    assert _terms("依赖层") == ["依赖", "赖层"]
    # hiragana grammar between kanji and katakana is dropped
    assert _terms("依存レイヤーは") == ["依存", "レイ", "イヤ", "ヤー"]


def test_mixed_script_text_is_handled_token_by_token():
    assert _terms("deploy 依存 v2") == ["deploy", "依存", "v2"]


def test_stopwords_and_generic_words_are_never_anchors():
    assert anchors_of("the and of with") == []
    assert anchors_of("rule knowledge memory context agent task") == []
    assert [a.text for a in anchors_of("the deploy rule")] == ["deploy"]
    # what contractions leave once the apostrophe splits them
    assert [a.text for a in anchors_of("don't refactor, it doesn't build and you'll see we've won't")] == [
        "refactor",
        "build",
        "see",
    ]
    # a stopword's other forms are stopwords too: "it takes twenty minutes" is about minutes
    assert [a.text for a in anchors_of("it takes twenty minutes, making and keeping it slow")] == [
        "twenty",
        "minutes",
        "slow",
        "twenty-minutes",
    ]


def test_cjk_generic_memory_words_are_not_anchors():
    anchor = anchors_of("提高记忆力")[0]
    assert "记忆" not in anchor.word.terms
    assert anchors_of("记忆") == []
    # the Japanese (and traditional) kanji of "memory" and "rule" too
    assert [a.word.terms for a in anchors_of("記憶力")] == [("憶力",)]
    assert anchors_of("規則") == []


def test_a_one_character_cjk_word_is_no_anchor():
    """What a run cut at kana leaves of an inflected word (決 of 決める, 良 of 良くする) says no more
    of a subject than a one-letter word."""
    assert [a.text for a in anchors_of("家族で決めるお小遣いのルール")] == ["家族", "小遣"]
    assert [a.text for a in anchors_of("良くする方法")] == []


def test_a_shorthand_anchor_also_matches_the_word_it_stands_for():
    [anchor] = anchors_of("msg")
    assert anchor.text == "msg" and anchor.word.terms == ("msg", terms.stem("message"))
    assert [a.word.terms for a in anchors_of("db k8s golang ext") if not a.pair] == [
        ("db", "databas"),
        ("k8s", "kubernet"),
        ("golang", "go"),
        ("ext", "extension"),
    ]
    # the index side is untouched: shorthand in a memory is indexed as written
    assert terms.index_terms("bump the k8s db") == "bump k8s db"


def test_adjacent_anchors_also_match_the_two_glued_and_form_a_name():
    spring, boot, jpa, *names = anchors_of("Spring Boot JPA")
    assert (spring.joined, boot.joined, jpa.joined) == (("springboot",), ("springboot", "bootjpa"), ("bootjpa",))
    # each glued pair is also an anchor of its own, after the words; then the technologies named
    assert [(a.text, a.word.terms, a.pair) for a in names if not a.source] == [
        ("spring-boot", ("springboot",), True),
        ("boot-jpa", ("bootjpa",), True),
    ]
    assert not any(a.pair for a in (spring, boot, jpa))
    assert [(a.text, a.joined) for a in anchors_of("spring of boot")] == [
        ("spring", ()),
        ("boot", ()),
    ]  # a stopword between breaks the pair
    # a number glues to the anchor before it, even one too short to be an anchor itself
    written = [(a.text, a.joined) for a in anchors_of("vue 3 app") if not a.source]
    assert written == [("vue", ("vue3",)), ("app", ()), ("vue-3", ())]
    # a number of one or two digits is no anchor alone (a count, a date, a version), a longer one is
    assert [(a.text, a.joined) for a in anchors_of("nextjs 15")] == [("nextjs", ("nextjs15",)), ("nextjs-15", ())]
    assert [(a.text, a.joined) for a in anchors_of("nextjs 404")] == [
        ("nextjs", ("nextjs404",)),
        ("404", ("nextjs404",)),
        ("nextjs-404", ()),
    ]
    assert [a.joined for a in anchors_of("404 nextjs")] == [(), ()]  # letters first
    assert [a.joined for a in anchors_of("部署 手順")] == [(), ()]
    # a repeated pair is one name
    names = [a.text for a in anchors_of("react query, react query") if a.pair and not a.source]
    assert names == ["react-query", "query-react"]


def test_a_compound_written_with_a_hyphen_is_one_word_and_two_words_apart_a_name():
    """The index holds a memory's "front-end" as `frontend` in every field; a task's "front-end" is
    that word, found wherever the memory has it, while "front end" is a name, found in names only."""
    glued = {a.text: (a.word.terms, a.pair) for a in anchors_of("the front-end and the back end")}
    assert glued["front-end"] == (("frontend",), False)
    assert glued["back-end"] == (("backend",), True)


def test_a_compound_with_a_part_no_anchor_is_also_the_other_parts_word():
    """ "e-mail", "log-in", "set-up": a part too short or too common to be an anchor alone does not
    lose the compound, which is the word a memory writes as `email`, `login`, `setup`; the other
    part's anchor finds it, and the task has no more words than it wrote."""
    found = {a.text: a.word.terms for a in anchors_of("users cannot log-in by e-mail after set-up") if not a.concept}
    assert found == {"users": ("user",), "log": ("log", "login"), "mail": ("mail", "email"), "set": ("set", "setup")}


def test_later_words_form_no_names_past_the_anchor_cap():
    words = [f"zz{chr(97 + n // 26)}{chr(97 + n % 26)}k" for n in range(route.MAX_ANCHORS + 3)]
    anchors, unused = route.anchors_of(" ".join(words))
    assert unused == 3
    assert [a.text for a in anchors if not a.pair] == words[: route.MAX_ANCHORS]
    # names only of kept words: the last kept word glues to no cut one
    assert [a.text for a in anchors if a.pair] == [f"{a}-{b}" for a, b in zip(words, words[1 : route.MAX_ANCHORS])]
    assert route.anchors_of("spring boot")[1] == 0


_QUERY_WORDS = st.sampled_from(
    [
        "spring",
        "boot",
        "Vue",
        "3",
        "15",
        "the",
        "of",
        "rule",
        "react",
        "query",
        "C#",
        "styled-components",
        "k8s",
        "部署",
        "手順",
        "ext",
        "Spring",
    ]
)


@given(st.lists(st.one_of(_QUERY_WORDS, st.text(max_size=6)), max_size=45).map(" ".join))
def test_anchors_are_the_kept_words_then_the_names_two_of_them_form_then_the_implied_stacks_then_concepts(query):
    anchors, unused = route.anchors_of(query)
    words = [a for a in anchors if not a.pair and "-" not in a.text]  # a name joins its two words with "-"
    implied = [a for a in anchors if a.source and not a.concept]
    given = [a for a in anchors if a.concept]  # concepts: signalled, or of a technology (`concepts`)
    names = anchors[len(words) : len(anchors) - len(implied) - len(given)]
    assert anchors == words + names + implied + given and len(implied) <= signatures.MAX_IMPLIED
    assert all(a.pair or "-" in a.text for a in names) and all(a.pair for a in implied + given)
    assert len({a.text for a in given}) == len(given) <= 2 * concepts.MAX_CONCEPTS
    assert len(words) <= route.MAX_ANCHORS and unused >= 0
    kept = [a.word.terms for a in words]
    assert len(set(kept)) == len(kept)  # no repeats
    assert len({a.word.terms for a in names}) == len(names)
    for name in names:
        first, second = (terms.words(part)[0] for part in name.text.split("-"))
        assert terms.meaningful(first).terms in kept
        assert second.text.isdigit() or terms.meaningful(second).terms in kept
        assert name.word.terms == (terms.glue(first, second),) and not name.joined


def test_hyphenated_compounds_are_also_indexed_as_one_word():
    """ "front-end" in a body is found by a task that writes "frontend" (a task's "front-end" and
    "front end" are glued on the query side already)."""
    assert terms.index_terms("Front-end code never imports back-end modules.").split() == [
        "front", "end", "cod", "never", "import", "back", "end", "modul", "frontend", "backend",
    ]  # fmt: skip
    # five letters or more, two runs of ASCII letters, no chains, no numbers, no flags
    for text in ("x-y", "ab-cd", "step-by-step", "utf-8", "--force", "-rf", "a-b-", "café-bar"):
        assert terms.index_terms(text).split() == terms.index_terms(text.replace("-", " ")).split(), text
    assert terms.index_terms("(e-mail)").split() == ["mail", "email"]
    assert terms.name_terms(["front-end"]).split() == ["front", "end", "frontend"]  # glued once


def test_ids_and_tags_also_index_their_words_glued():
    assert terms.name_terms(["svelte-5-vs-svelte-4"]).split() == [
        "svelt",
        "vs",
        "svelt",
        "svelte5",
        "vssvelt",
        "svelte4",
    ]
    assert terms.name_terms(["spring-boot", "vue 3", "the-app"]).split() == [
        "spring",
        "boot",
        "springboot",
        "vue",
        "vue3",
        "app",
    ]
    assert terms.name_terms([]) == ""
    # the query side glues the same way
    spring, boot, *_ = anchors_of("spring boot")
    assert spring.joined == boot.joined == (terms.glue(*terms.words("spring boot")),)


def test_token_estimate_counts_non_ascii_one_each():
    assert terms.estimate_tokens("abcd") == 1
    assert terms.estimate_tokens("abcde") == 2
    assert terms.estimate_tokens("日本語") == 3
    assert terms.estimate_tokens("ab日") == math.ceil(2 / 4 + 1)


@given(st.text(max_size=300))
def test_index_terms_never_fail_and_have_no_spaces_inside_terms(text):
    for term in _terms(text):
        assert term and " " not in term


@given(st.text(max_size=200))
def test_the_ascii_fast_path_matches_the_general_path(text):
    slow = " ".join(t for w in terms.words(text) if not terms.is_stopword(w) for t in w.terms)
    assert terms.index_terms(text) == slow


def test_dot_js_names_match_their_joined_spelling():
    assert _terms("Next.js") == _terms("nextjs") == _terms("NextJS")
    assert _terms("node.js") == _terms("nodejs")
    assert _terms("ASP.NET Core on .NET 8") == ["aspnet", "cor", "net"]
    assert anchors_of("dotnet")[0].word.terms == ("dotnet", "net")


def test_names_written_with_symbols_are_words():
    assert _terms("C++17 and C#, F# or N+1 queries") == ["cpp", "17", "csharp", "fsharp", "nplus1", "query"]
    assert _terms("## C# notes") == _terms("c# notes") == ["csharp", "not"]
    # inside a longer word, or a number after anything but ++, the symbols stay breaks
    assert _terms("abc#def x+c++ c++x n+12 ESC#") == ["abc", "def", "12", "esc"]
    assert [w.text for w in terms.words("port this to C++20")] == ["port", "this", "to", "cpp", "20"]


# Names with symbols, written independently of `terms._named_symbols`: not after a word character
# or + #, and not before one (a number may follow ++).
_SYMBOL_NAME = re.compile(r"(?<![\w+#])(?:([cf]#|n\+1)(?![\w+#])|(c\+\+)(?![^\W\d]|[+#]))", re.IGNORECASE)


def _whole_text_fold(text: str) -> str:
    """`fold` as first written: the whole text through NFKC, lower case, NFD and NFC at once."""
    text = re.sub(r"\.(js|net)\b", r"\1", text, flags=re.IGNORECASE)
    text = _SYMBOL_NAME.sub(lambda m: terms.SYMBOL_NAMES[m.group(0).lower()] + " ", text)
    text = unicodedata.normalize("NFKC", text).lower().replace("đ", "d")
    return unicodedata.normalize("NFC", re.sub("[\u0300-\u036f]", "", unicodedata.normalize("NFD", text)))


# Newlines, plain breaks (dashes, quotes, box drawing, emoji), characters folding changes
# (accents, no-break space, ellipsis, ligatures), combining marks, final sigma and CJK.
_FOLD_ALPHABET = (
    st.sampled_from(list("\n\n\nab .jsJS<>=—’“═│✅€\u00a0…™ﬁé\u0301\u0338\u0323ΣσΑđĐœ²ガ依\u3099・cCfFnN#++1_7tT"))
    | st.characters()
)


@given(st.text(_FOLD_ALPHABET, max_size=60))
def test_fold_line_by_line_and_on_plain_text_matches_whole_text_folding(text):
    assert terms.fold(text) == _whole_text_fold(text)


def test_an_identifier_implies_its_technology_as_a_name_anchor() -> None:
    """`useEffect` is React's: the task gets `react` as an anchor matched in strong fields only, by
    the names it does not write itself; a pasted log implies at most MAX_IMPLIED technologies."""
    (implied,) = [a for a in route.anchors_of("fix the useEffect loop")[0] if a.source and not a.concept]
    assert (implied.text, implied.word.terms, implied.pair, implied.source) == (
        "react",
        ("react", "reactj"),
        True,
        "useeffect",
    )
    (named,) = [a for a in route.anchors_of("react: fix the useEffect loop")[0] if a.source and not a.concept]
    assert named.word.terms == ("reactj",)
    assert not any(
        a.source and not a.concept for a in route.anchors_of("docker: the COPY --from stage is not found")[0]
    )
    assert [
        a.source
        for a in route.anchors_of("a goroutine leaks when CMakeLists.txt changes")[0]
        if a.source and not a.concept
    ] == [
        "goroutine",
        "cmakelists txt",
    ]
    one_each: dict[str, str] = {}
    for signature, techs in signature_tables.SIGNATURES.items():
        one_each.setdefault(techs[0], signature)
    many = " ".join(one_each.values())
    assert len([a for a in route.anchors_of(many)[0] if a.source and not a.concept]) == signatures.MAX_IMPLIED


def test_a_technology_named_by_a_name_no_everyday_word_brings_its_other_names() -> None:
    """`GMS 2` is GameMaker, `sklearn` scikit-learn; `spring` may be the season and `express` a train, so a task
    writing only those gets no other name of Spring Boot or Express (`signatures.EVERYDAY_NAMES`)."""

    def implied(text: str) -> list[tuple[str, tuple[str, ...], str]]:
        return [(a.text, a.word.terms, a.source) for a in route.anchors_of(text)[0] if a.source and not a.concept]

    assert implied("Fix GMS 2 import errors on Linux") == [
        ("gamemaker", ("gamemaker", "gamemakerstudio", "gml"), "gms-2")
    ]
    assert implied("sklearn pipeline fails") == [("scikit-learn", ("scikitlearn", "scikit"), "sklearn")]
    assert implied("spring cleaning checklist") == implied("an express train to Osaka") == []
    # an everyday name with one of its technology's signatures is no everyday word there
    assert implied("org.hibernate.LazyInitializationException: could not initialize proxy") == [
        ("hibernate", ("jpa", "jpahibernat", "springdatajpa"), "lazyinitializationexception")
    ]
    # TanStack is a family (Query, Router, Start): its name alone is none of them
    assert implied("validate the search params on a tanstack router route") == []
    assert {"spring", "express", "hibernat"} <= signatures.EVERYDAY_NAMES
    assert not {"gms2", "sklearn"} & signatures.EVERYDAY_NAMES


def test_common_words_joined_as_code_imply_their_stack() -> None:
    """`on_delete` is Django's and `target_link_libraries` CMake's though each of their words is
    common; written as prose, or inside a path or a hyphenated word, they imply nothing
    (`signature_tables.CODE`)."""

    def implied(text: str) -> list[tuple[str, str]]:
        return [(a.text, a.source) for a in route.anchors_of(text)[0] if a.source and not a.concept]

    assert implied("check the `on_delete` of every model field") == [("django", "on_delete")]
    assert implied("build: use the modern target_link_libraries(app PRIVATE fmt) form") == [
        ("cmake", "target_link_libraries")
    ]
    assert implied("what happens on delete of a user") == []
    assert implied("see docs/on_delete-notes.md") == []
    # each joint's tail is looked up too: a longer call ends in a listed one
    assert "op.add_column" in signatures.code_identifiers("self.op.add_column('users', col)")
    # a pasted chain of any length gives its last CODE_PARTS tails, not one per joint
    assert signatures.code_identifiers("a." * 50_000 + "b") == [
        "a." * (signatures.CODE_PARTS - 1 - k) + "b" for k in range(signatures.CODE_PARTS)
    ]


def test_a_receiver_and_a_member_any_code_writes_imply_nothing() -> None:
    """`data.map` is no Haskell and `session.get` no SQLAlchemy, whatever one stack's list said
    (`signature_table.generic_code`); a receiver of one stack (`op.create_table`) still implies it."""
    from benchmarks.signature_table import generic_code

    def implied(text: str) -> list[str]:
        return [a.text for a in route.anchors_of(text)[0] if a.source and not a.concept]

    assert implied("const items = data.map((d) => d.name) renders nothing") == []
    assert implied("session.get(url) hangs") == implied("router.post returns 404") == []
    assert implied("op.create_table('users') fails") == ["alembic"]
    assert not any(generic_code(identifier) for identifier in signature_tables.CODE)
    assert generic_code("data.map") and not generic_code("web::data") and not generic_code("op.create_table")


def test_the_code_table_holds_identifiers_as_a_text_writes_them() -> None:
    assert all(signatures.CODE_IDENTIFIER.fullmatch(identifier) for identifier in signature_tables.CODE)
    parts = (signatures.CODE_JOINT.split(identifier)[::2] for identifier in signature_tables.CODE)
    assert max(map(len, parts)) <= signatures.CODE_PARTS
    assert all(identifier == identifier.lower() for identifier in signature_tables.CODE)
    assert all(techs and set(techs) <= signatures.NAMES.keys() for techs in signature_tables.CODE.values())


def test_the_signature_table_is_in_the_form_the_lookup_reads() -> None:
    """Each signature is written as the words `terms.words` makes of it, names known technologies, and
    its first word and length are what `signatures.implied` looks at."""
    table = signature_tables.SIGNATURES
    assert all(" ".join(w.text for w in terms.words(signature)) == signature for signature in table)
    assert all(techs and set(techs) <= signatures.NAMES.keys() for techs in table.values())
    longest: dict[str, int] = {}
    for signature in table:
        first, length = signature.split()[0], len(signature.split())
        longest[first] = max(longest.get(first, 0), length)
    assert longest == signature_tables.FIRST_WORDS
    assert all(names for names in signatures.NAMES.values())
    assert {name for names in signatures.NAMES.values() for name in names} >= signatures.EVERYDAY_NAMES


def test_a_cjk_word_holds_software_writing_where_a_listed_word_is_inside_it() -> None:
    assert devwords.holds_one("后报错")  # 报错 "reports an error", inside the run the tokenizer cuts
    assert devwords.holds_one("에러가")  # 에러 with its particle
    assert devwords.holds_one("コンポーネント")
    assert not devwords.holds_one("蟒蛇")  # a python, the snake
    assert not devwords.holds_one("咖啡店新菜单")
    assert not devwords.holds_one("報")  # one character: no word


def test_every_software_word_is_one_cjk_word_as_the_tokenizer_cuts_text() -> None:
    """A listed word the tokenizer splits (at kana, a script change or a Chinese function
    character) could never be found inside one word of a task."""
    assert [w for w in devwords.WORDS if [(x.text, x.cjk) for x in terms.words(w)] != [(w, True)]] == []
    assert max(map(len, devwords.WORDS)) == devwords.LONGEST


def test_a_stack_name_written_in_hangul_or_han_is_a_name_anchor() -> None:
    def implied(text: str) -> list[tuple[str, str]]:
        return [(tech, source) for tech, _, source in signatures.implied(terms.words(text))]

    assert implied("리액트에서 상태가 안 바뀌어요") == [("react", "리액트")]  # the particle 에서 glued on
    assert implied("리액트네이티브 앱") == [("react-native", "리액트네이티브")]  # the longest name wins
    assert implied("鸿蒙应用开发报错") == [("harmonyos", "鸿蒙")]
    assert implied("자바스크립트 배열") == []  # JavaScript, not Java
    assert implied("일러스트 그리기") == []  # 러스트 (Rust) inside a word is no name: names start words


def test_every_script_name_is_one_cjk_word_of_a_known_technology() -> None:
    assert [name for name in signatures.SCRIPT_NAMES if [w.text for w in terms.words(name)] != [name]] == []
    assert set(signatures.SCRIPT_NAMES.values()) - set(signatures.NAMES) == {""}
    assert max(map(len, signatures.SCRIPT_NAMES)) == signatures.SCRIPT_NAME_LONGEST


def test_vietnamese_words_are_foreign_and_phrases_of_software_writing_marked() -> None:
    words = devwords.foreign_words("Làm sao để tối ưu truy vấn PostgreSQL bị chậm")
    assert words["truy"] and words["van"]  # truy vấn, "query": a phrase of software writing
    assert words["cham"] is False and "postgresql" not in words
    assert devwords.foreign_words("a naïve datetime in Python") == {}  # one marked word: no Vietnamese text


def test_an_english_word_written_plainly_beside_its_vietnamese_twin_stays_english() -> None:
    words = devwords.foreign_words("Dùng channel trong Go thì gỡ lỗi thế nào?")
    assert words["loi"] and "go" not in words  # gỡ folds to go, but Go is also written as itself
    assert devwords.foreign_words("Cách gỡ lỗi nhanh")["go"]


def test_vietnamese_typed_without_marks_is_vietnamese_text() -> None:
    assert terms.plain_vietnamese(terms.words("lam sao de toi uu truy van khi bang lon"))
    assert not terms.plain_vietnamese(terms.words("Set the DA and RA fields of the bi-directional map"))
    words = devwords.foreign_words("lam sao de toi uu truy van postgres khi bang lon")
    assert words["truy"] and words["van"] and words["lam"] is False  # truy vấn, matched without marks
    assert "postgres" not in words and "bang" not in words  # bảng: no syllable of the list, no phrase


def _anchor_texts(task: str) -> set[str]:
    return {anchor.text for anchor in route.anchors_of(task)[0]}


def test_an_identifier_is_split_into_its_words_but_a_product_name_is_not() -> None:
    """`LazyInitializationException` holds words a memory may spell out; `JavaScript` and
    `PostgreSQL` are names, whose parts (`java`, `sql`) name other subjects."""
    assert {"lazy", "initialization", "exception"} <= _anchor_texts("LazyInitializationException thrown")
    for task, name, part in (
        ("the JavaScript bundle", "javascript", "java"),
        ("PostgreSQL timeouts", "postgresql", "sql"),
        ("GitHub Actions", "github", "git"),
    ):
        anchors = _anchor_texts(task)
        assert name in anchors and part not in anchors, anchors


def test_an_acronyms_plural_is_one_word() -> None:
    """`PDFs` is the plural of `pdf`, not the words `pd` and `fs` (which no memory holds, and which
    made "the PDFs look wrong" look off-topic where "the pdfs look wrong" was not)."""
    for task in ("the PDFs look wrong in production", "dedupe the IDs", "open two PRs", "the APIs and URLs"):
        anchors = _anchor_texts(task)
        assert not anchors & {"pd", "fs", "ds", "rs", "ap", "ur", "ls"}, anchors
    assert {"fetch", "urls", "later"} <= _anchor_texts("fetchURLsLater timed out")
    assert {"http", "server"} <= _anchor_texts("HTTPServer crashed")  # an acronym before a word: as before
