"""Japanese, Chinese, Vietnamese and English routing over the product's own read-path page.

`fixtures/multilingual` holds one memory per section and language; `fixtures/bench/multilingual.json`
holds queries written the way a user would ask, in each language.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from engram.layers import open_layers
from engram.route import Options, route
from engram.workspace import open_workspace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = json.loads((FIXTURES / "bench" / "multilingual.json").read_text(encoding="utf-8"))
LANGS = ("ja", "zh", "vi")


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    project = tmp_path_factory.mktemp("multilingual")
    shutil.copytree(FIXTURES / "multilingual" / ".agents", project / ".agents")
    cwd = os.getcwd()
    os.chdir(project)
    try:
        ws = open_workspace(project)
        yield open_layers(ws, None, [])  # builds the index on first use
    finally:
        os.chdir(cwd)


def ranked(layers, query: str) -> list[str]:
    """The full ranking, as `load --all` orders it (a normal load scores only what could pack)."""
    return [c.id for c in route(layers, query, Options(everything=True)).admitted]


def test_every_section_is_found_in_the_same_language_within_the_top_3(layers):
    """For each section and language, a user's query ranks that memory in its top 3."""
    found: dict[tuple[str, str], bool] = {}
    for case in CASES:
        if case["lang"] in LANGS and case["expect"]:
            key = (case["lang"], case["expect"][0])
            found[key] = found.get(key, False) or case["expect"][0] in ranked(layers, case["query"])[:3]
    sections = {c["expect"][0].split("-", 1)[1] for c in CASES if c["expect"]}
    assert len(sections) == 5
    assert {(lang, f"{lang}-{s}") for lang in LANGS for s in sections} == set(found)
    assert [key for key, ok in found.items() if not ok] == []


@pytest.mark.parametrize(
    "with_marks, without",
    [
        ("lớp phụ thuộc hoạt động thế nào", "lop phu thuoc hoat dong the nao"),
        ("bộ lọc vai trò ẩn mục nào", "bo loc vai tro an muc nao"),
    ],
)
def test_vietnamese_routes_the_same_with_and_without_diacritics(layers, with_marks, without):
    assert ranked(layers, with_marks)[:1] == ranked(layers, without)[:1] != []


@pytest.mark.parametrize(
    "query, expected",
    [
        ("依存レイヤー", "ja-dependency-layers"),
        ("依存関係", "ja-dependency-layers"),
        ("依赖层", "zh-dependency-layers"),
        ("フック", "ja-hook-deltas"),
    ],
)
def test_kana_kanji_and_simplified_chinese_queries_find_their_language_first(layers, query, expected):
    assert ranked(layers, query)[0] == expected


def test_a_one_character_fragment_does_not_bury_the_real_subject(layers):
    """読 (what kana leave of 読み込む) is in the read-flow memory's directive but no anchor; the
    memory about dependencies, which has the real subject 依存関係, ranks among the first three."""
    assert "ja-dependency-layers" in ranked(layers, "依存関係のある記憶を読み込む方法は？")[:3]


def test_an_english_query_finds_the_english_section_first(layers):
    """The other languages' copies share its id (they may follow, as the same section); the
    English words of the query are held only by the English one."""
    assert ranked(layers, "how does layered disclosure turn bodies into cards")[0] == "en-layered-disclosure"


def test_a_cjk_query_is_not_answered_in_english_first(layers):
    assert ranked(layers, "钩子已经交付过的记忆")[0].startswith("zh-")
    assert ranked(layers, "フックの配信済みの集合")[0].startswith("ja-")


@pytest.mark.parametrize(
    "query, expected",
    [
        ("--budget-tokens を超えたとき、本文とカードはどう削られますか", "ja-layered-disclosure"),
        ("工作区和全局索引里有重复条目时，以哪个为准？", "zh-read-flow"),
    ],
)
def test_a_cjk_fragment_no_memory_has_does_not_outweigh_the_words_found(layers, query, expected):
    """Runs cut at kana and function characters leave fragments (削, 个为准) no memory has; these
    questions still find their section (the weight rule itself: test_load.py, at 100 memories)."""
    assert [c.id for c in route(layers, query, Options()).pack][:1] == [expected]


@pytest.mark.parametrize("query", ["記憶力を良くする方法はありますか", "家族で決めるお小遣いのルール"])
def test_an_everyday_japanese_question_loads_nothing(layers, query):
    """Asking how to improve one's memory, or for pocket-money rules set by the family: 記憶 ("memory")
    and ルール ("rule") are generic memory words, 良 and 決 what kana leave of 良くする and 決める."""
    assert route(layers, query, Options()).pack == []
