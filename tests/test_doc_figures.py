"""The docs: figures generated from the committed files agree with them, the README stays a
short front page, and every link between the pages leads somewhere."""

import re

import pytest

from bench import doc_figures

ROOT = doc_figures.ROOT
PAGES = sorted({where for where, _ in doc_figures.BLOCKS.values()})


@pytest.mark.parametrize("page", PAGES)
def test_the_docs_quote_the_committed_files(page: str) -> None:
    _, changed = doc_figures.rewrite((ROOT / page).read_text(encoding="utf-8"), page)
    assert changed == [], "run python -m bench.doc_figures"


def test_a_drifted_figure_is_found() -> None:
    page = doc_figures.BLOCKS["ladder"][0]
    text = (ROOT / page).read_text(encoding="utf-8")
    drifted = text.replace("| random@1 | `random` | 0 |", "| random@1 | `random` | 7 |")
    assert drifted != text
    _, changed = doc_figures.rewrite(drifted, page)
    assert changed == ["ladder"]
    page = doc_figures.BLOCKS["testset"][0]
    text = (ROOT / page).read_text(encoding="utf-8")
    drifted = re.sub(r"It holds \*\*\d+ questions", "It holds **999 questions", text)
    assert drifted != text and doc_figures.rewrite(drifted, page)[1] == ["testset"]
    with pytest.raises(SystemExit, match="no block figures:testset"):
        doc_figures.rewrite(text.replace("<!-- figures:testset -->", ""), page)


def test_the_readme_is_a_short_front_page_linking_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", readme))
    assert linked == {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    # Install comes before the quick start, and the quick start before the modes.
    order = [readme.index(h) for h in ("## Install", "## Quick start", "## Modes",
                                       "## Reading the results", "## Rebuilding the test set")]
    assert order == sorted(order)


def test_every_relative_link_in_the_docs_resolves() -> None:
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"
