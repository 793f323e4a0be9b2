"""The README's generated figures agree with the committed files they come from."""

import pytest

from bench import doc_figures


def test_the_readme_quotes_the_committed_files() -> None:
    _, changed = doc_figures.rewrite(doc_figures.README.read_text(encoding="utf-8"))
    assert changed == [], "run python -m bench.doc_figures"


def test_a_drifted_figure_is_found() -> None:
    text = doc_figures.README.read_text(encoding="utf-8")
    drifted = text.replace("| random@1 | `random` | 0 |", "| random@1 | `random` | 7 |")
    assert drifted != text
    _, changed = doc_figures.rewrite(drifted)
    assert changed == ["ladder"]
    with pytest.raises(SystemExit, match="no block figures:ladder"):
        doc_figures.rewrite(text.replace("<!-- figures:ladder -->", ""))
