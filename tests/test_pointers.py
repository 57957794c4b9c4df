"""A pointer memory routes on the documents it links to (`engram.pointers`): which links count,
which documents are followed, and that a load sees them, never prints them, and notices when
they change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import pointers
from helpers import Project

POINTER = "See [README.md](mdc:web/features/entitlements/README.md) for details."
DOCUMENT = (
    "# Entitlements\nA plan is a tier of features: hobby, pro, enterprise. A limit caps the annotation queue count.\n"
)
TESTING = "Every feature has unit tests; run them with pnpm test before pushing, and keep fixtures small."


def test_links_imports_and_cursor_links_are_references() -> None:
    body = (
        "See [the guide](mdc:web/rbac/README.md), @docs/llm-guides/ui.md, [specs](../../docs/Specs.md#tests)."
        " Also [notes](<docs/notes.txt>) and @docs/last.md, and the [tables](content/ui-patterns/tables.mdx) page."
    )
    assert pointers.references(body) == [
        ("web/rbac/README.md", "", True),
        ("docs/llm-guides/ui.md", "", True),
        ("../../docs/Specs.md", "tests", True),
        ("docs/notes.txt", "", True),
        ("docs/last.md", "", True),
        ("content/ui-patterns/tables.mdx", "", True),  # a docs site's page
    ]


def test_urls_code_packages_and_addresses_are_no_references() -> None:
    body = (
        "[site](https://example.com/guide.md) [code](mdc:web/src/root.ts) @cratis/components/DataPage"
        " @/hooks/useApi mail me@team.md [abs](/etc/motd.md) @docs/ui.md @docs/ui.md"
    )
    assert pointers.references(body) == [("docs/ui.md", "", True)]


def test_a_path_written_bare_or_in_backticks_is_a_reference_but_a_record_is_not() -> None:
    assert pointers.references("Read `docs/representations.md`.") == [("docs/representations.md", "", False)]
    assert pointers.references("see the Testing section in the root AGENTS.md file") == [("AGENTS.md", "", False)]
    assert pointers.references("Add an entry to CHANGELOG.md and keep LICENSE.txt") == []
    # a link's text is no reference of its own: only its target is followed
    assert pointers.references("See [README.md](mdc:web/rbac/README.md)") == [("web/rbac/README.md", "", True)]


def test_a_link_to_a_section_reads_that_section() -> None:
    text = "# Guide\nintro words\n## Rule 4 — Business logic in kea, not React hooks\nuse disposables\n### Detail\nmore\n## Rule 5\nother\n"
    assert pointers.section(text, "rule-4--business-logic-in-kea-not-react-hooks") == (
        "## Rule 4 — Business logic in kea, not React hooks\nuse disposables\n### Detail\nmore\n"
    )
    assert pointers.section(text, "no-such-heading") == text


def test_only_a_short_body_is_a_pointer() -> None:
    assert pointers.is_pointer(POINTER)
    assert not pointers.is_pointer(" ".join(["word"] * pointers.POINTER_WORDS))


def documents(project: Project, body: str) -> list[str]:
    memory = project.write("pointer", body)
    found = pointers.pointed_documents(body, str(memory), str(project.path), str(project.root))
    return [link.document.rel for link in found if link.document.size]


def test_documents_are_found_beside_the_memory_or_from_the_project_top(project: Project) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "ui.md").write_text("views", encoding="utf-8")
    (project / "docs" / "api.md").write_text("endpoints", encoding="utf-8")
    assert documents(project, "@docs/ui.md and [api](../../../docs/api.md)") == ["docs/ui.md", "docs/api.md"]


def test_a_link_written_for_the_rule_s_first_home_still_leads_to_its_document(project: Project) -> None:
    """`../../docs/x.md` was written in `.claude/rules/`, two folders down; from engram's
    `.agents/.engram/rules/` it climbs one short, so it is also read from the project's top."""
    (project / "docs").mkdir()
    (project / "docs" / "lsp.md").write_text("language server", encoding="utf-8")
    assert documents(project, "Read [the notes](../../docs/lsp.md#setup).") == ["docs/lsp.md"]


def test_the_project_s_own_instruction_files_at_its_top_are_not_followed(project: Project) -> None:
    """Hosts load the top `AGENTS.md` whole; a rule pointing to a section of it would route on all
    of it. An area's own `AGENTS.md` is a document like any other."""
    (project / "AGENTS.md").write_text("everything about the project", encoding="utf-8")
    (project / "frontend").mkdir()
    (project / "frontend" / "AGENTS.md").write_text("the frontend's logic", encoding="utf-8")
    assert documents(project, "See the Testing section in the root AGENTS.md.") == []
    assert documents(project, "Read `frontend/AGENTS.md`.") == ["frontend/AGENTS.md"]


def test_no_document_outside_the_project_or_in_the_memory_root_is_followed(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("a secret plan", encoding="utf-8")
    (project / "docs").mkdir()
    os.symlink(outside, project / "docs" / "linked.md")
    project.write("sibling", TESTING)
    body = "[a](../../../../outside.md) @docs/linked.md [b](sibling.md) [c](../../.engram/rules/sibling.md)"
    assert documents(project, body) == []


def test_a_missing_document_is_recorded_so_that_its_creation_counts(project: Project) -> None:
    memory = project.write("pointer", "@docs/later.md")
    found = pointers.pointed_documents("@docs/later.md", str(memory), str(project.path), str(project.root))
    assert pointers.Link(pointers.Document("docs/later.md", 0, 0, 0), "", True) in found


def test_at_most_a_few_documents_are_followed(project: Project) -> None:
    (project / "docs").mkdir()
    names = [f"d{n}.md" for n in range(pointers.MAX_DOCUMENTS + 2)]
    for name in names:
        (project / "docs" / name).write_text(name, encoding="utf-8")
    assert len(documents(project, " ".join(f"@docs/{name}" for name in names))) == pointers.MAX_DOCUMENTS


@pytest.fixture
def shop(project: Project) -> Project:
    """A pointer memory whose document says what it is about, and a memory about tests."""
    project.write("entitlements", POINTER, tags=["entitlements"], directive="How features are made available.")
    project.write("testing", TESTING, tags=["tests"], directive="Write tests next to the code.")
    (project / "web" / "features" / "entitlements").mkdir(parents=True)
    (project / "web" / "features" / "entitlements" / "README.md").write_text(DOCUMENT, encoding="utf-8")
    return project


def loaded(project: Project, task: str) -> list[str]:
    return [entry["id"] for entry in project.load_json("--", task)["entries"]]


@pytest.mark.installed
def test_a_pointer_memory_routes_on_its_document_which_is_never_printed(shop: Project) -> None:
    shop.index()
    task = "remove the annotation queue limit from the hobby plan"
    assert loaded(shop, task) == ["entitlements"]
    printed = shop.load("--", task).stdout
    assert "entitlements" in printed and "hobby" not in printed and "annotation" not in printed


def test_an_edited_document_is_routed_on_at_the_next_load(shop: Project) -> None:
    shop.index()
    assert loaded(shop, "quota overrides for self-hosted licenses") == []
    readme = shop / "web" / "features" / "entitlements" / "README.md"
    readme.write_text(DOCUMENT + "Quota overrides for self-hosted licenses come from the license key.\n")
    assert loaded(shop, "quota overrides for self-hosted licenses") == ["entitlements"]


def test_a_document_written_after_indexing_is_routed_on(project: Project) -> None:
    project.write("design", "@docs/design-system.md", tags=["design"], directive="Follow the design system.")
    project.write("testing", TESTING, tags=["tests"], directive="Write tests next to the code.")
    project.write("vault", "Read keys from the environment; the vault path is in docs/vault.md.", tags=["vault"])
    result = project.index()
    indexed = result.stdout + result.stderr
    assert "design.md: it links to docs/design-system.md, which is missing or empty" in indexed
    assert "vault.md:" not in indexed  # a path in a sentence is followed when it is there, no link to mend
    assert loaded(project, "which spacing tokens do buttons use") == []
    (project / "docs").mkdir()
    (project / "docs" / "design-system.md").write_text("Buttons use the spacing tokens sm, md and lg.\n")
    assert loaded(project, "which spacing tokens do buttons use") == ["design"]


def test_a_long_memory_is_not_routed_on_its_links(shop: Project) -> None:
    shop.write("entitlements", POINTER + " " + TESTING * 3, tags=["entitlements"], directive="Feature availability.")
    assert "entitlements" not in loaded(shop, "remove the annotation queue limit from the hobby plan")


def test_check_names_a_pointer_memory_whose_document_changed(shop: Project) -> None:
    from engram.freshness import compare_sources
    from engram.index import open_index
    from engram.workspace import open_workspace

    shop.index()
    (shop / "web" / "features" / "entitlements" / "README.md").write_text(DOCUMENT + "More.\n")
    workspace = open_workspace(str(shop.path))
    problems = compare_sources(open_index(workspace.root.index_path), workspace.root, workspace.config)
    assert [(p.kind, p.reason.split(";")[0]) for p in problems] == [
        ("stale", "a document it points to changed since indexing")
    ]


def test_a_document_that_looks_like_it_holds_a_secret_is_not_routed_on(shop: Project) -> None:
    readme = shop / "web" / "features" / "entitlements" / "README.md"
    readme.write_text(DOCUMENT + "Staging key: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n", encoding="utf-8")
    result = shop.index()
    assert "looks like it holds a secret" in result.stderr + result.stdout
    assert loaded(shop, "remove the annotation queue limit from the hobby plan") == []


def test_dry_run_says_a_word_was_found_in_a_linked_document(shop: Project) -> None:
    printed = shop.load("--dry-run", "--", "raise the annotation queue limit").stdout
    assert "annotation -> linked document" in printed
    assert "readme -> body" in shop.load("--dry-run", "--", "entitlements readme").stdout


def test_a_global_folder_s_memory_routes_on_a_document_kept_beside_its_memory_folders(project: Project) -> None:
    folder = project.make_global()
    (folder / "docs").mkdir()
    (folder / "docs" / "incidents.md").write_text("Page the on-call engineer through the pager rotation.\n")
    project.write_global("incidents", "@docs/incidents.md", tags=["incidents"], directive="Handle incidents.")
    project.write("testing", TESTING, tags=["tests"], directive="Write tests next to the code.")
    project.config({"global_path": str(folder)})
    assert loaded(project, "who is in the pager rotation") == ["incidents"]


def test_two_memories_linking_to_two_sections_of_one_document_route_apart(project: Project) -> None:
    (project / "frontend").mkdir()
    (project / "frontend" / "AGENTS.md").write_text(
        "# Frontend\n## Disposables\nEvery logic cleans up timers through disposables.\n"
        "## Feature flags\nStories mock feature flags with the flag decorator.\n",
        encoding="utf-8",
    )
    project.write("kea-cleanup", "Read [this](../../../frontend/AGENTS.md#disposables).", tags=["kea"])
    project.write("storybook-flags", "Read [this](../../../frontend/AGENTS.md#feature-flags).", tags=["storybook"])
    project.write("testing", TESTING, tags=["tests"], directive="Write tests next to the code.")
    assert loaded(project, "timers leak because the logic never cleans up") == ["kea-cleanup"]
    assert loaded(project, "mock a flag in the story decorator") == ["storybook-flags"]


PIECES = st.sampled_from(["a", "b", ".", "/", "-", "_", "@", "#", ":", "(", ")", "[", "]", "<", ">", " ", "`", "\n",
                          "\u00e9", "\u4e2d", "docs/", ".md", "mdc:", "../", "https://", "?x"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(body=st.lists(PIECES, max_size=60).map("".join))
def test_any_body_gives_references_with_a_document_suffix_and_never_raises(body: str) -> None:
    for target, _, _ in pointers.references(body):
        assert target.lower().endswith(pointers.DOCUMENT_SUFFIXES) and "://" not in target


def test_a_link_to_a_fifo_or_a_folder_or_a_loop_is_no_document_and_hangs_nothing(project: Project) -> None:
    (project / "docs").mkdir()
    os.mkfifo(project / "docs" / "pipe.md")
    (project / "docs" / "folder.md").mkdir()
    os.symlink(project / "docs" / "loop.md", project / "docs" / "loop.md")
    body = "@docs/pipe.md @docs/folder.md @docs/loop.md"
    assert documents(project, body) == []
    project.write("pointer", body, tags=["pointer"])
    assert project.index().returncode == 0


def test_a_body_of_links_to_nowhere_records_a_bounded_number_of_places(project: Project) -> None:
    body = " ".join(f"@docs/missing-{n}.md" for n in range(40))
    memory = project.write("pointer", body)
    found = pointers.pointed_documents(body, str(memory), str(project.path), str(project.root))
    assert len(found) <= 2 * pointers.MAX_REFERENCES


HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "folders" / "harbor"


@pytest.mark.installed
def test_the_bundled_pointer_folder_routes_on_its_documents(project: Project) -> None:
    """`fixtures/folders/harbor`: its pointer rules hold a line each, the words of these tasks are
    their documents' alone (its own cases, `fixtures/bench/harbor.json`, are held out)."""
    shutil.copytree(HARBOR, project.path, dirs_exist_ok=True)
    project.index()
    assert loaded(project, "verify the digest of each blob in the s3 driver")[:1] == ["blob-io"]
    assert loaded(project, "proration amounts shown in cents are wrong")[:1] == ["hosted-limits"]
