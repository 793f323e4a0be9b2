"""The docs: figures generated from the committed files agree with them, the README stays a
short front page, and every link between the pages leads somewhere."""

import json
import re
import shutil
from pathlib import Path

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
    # The first ladder table on the page is ladder.csv's; the 17.1 ladder's follows.
    drifted = text.replace("| random@1 | `random` | 0 |", "| random@1 | `random` | 7 |", 1)
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


def test_the_readme_and_the_makefile_give_make_demo_one_time() -> None:
    """The last measurement, 7 min 05 s from a cold clone on two loaded cores, in both
    (before, the README said two minutes and the Makefile three, then about six)."""
    said = re.compile(r"in ((?:\w+ ){0,2}\w+) minutes on two cores")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme[readme.index("## Quick start"):readme.index("## Modes")]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile[:makefile.index("\ndemo:")].rsplit("\n\n", 1)[-1]
    in_readme = said.findall(" ".join(quick_start.split()))
    assert in_readme == said.findall(" ".join(demo.replace("#", " ").split()))
    assert in_readme == ["six to seven"]


def test_every_relative_link_in_the_docs_resolves() -> None:
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_every_docs_image_is_its_generators_and_current() -> None:
    """Each image in docs/ is recorded with the command and commit that made it, is the image
    that command made, and was made from today's files (static_vs_game.png is drawn again and
    compared byte for byte; a screenshot cannot be remade here, so its inputs are compared)."""
    assert doc_figures.stale_images() == []
    records = json.loads((ROOT / doc_figures.IMAGES_FILE).read_text(encoding="utf-8"))
    assert set(records) == {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.png")}
    assert all(r["command"].startswith("python -m bench.doc_figures") and r["commit"]
               for r in records.values())


def test_a_drifted_image_is_found(tmp_path: Path) -> None:
    """A copy of the repository's docs and inputs: an image changed by hand, a ladder that
    changed after a screenshot and an image nobody recorded are each named."""
    for name in (doc_figures.IMAGES_FILE, *doc_figures.DEMO_INPUTS, doc_figures.FIT_FIGURE,
                 doc_figures.MAP_FIGURE, *doc_figures.MAP_INPUTS, doc_figures.CROSSWALK_FIGURE,
                 *doc_figures.CROSSWALK_INPUTS, doc_figures.MAIA_FIGURE, *doc_figures.SCREENSHOTS,
                 doc_figures.INSPECT_SHOT, *doc_figures.INSPECT_INPUTS):
        src, dst = ROOT / name, tmp_path / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy(src, dst)
    # What each figure draws is checked above, on the repository itself: here, the records.
    assert doc_figures.stale_images(tmp_path, redraw=False) == []
    ladder = doc_figures.DEMO_INPUTS[1]  # the first ladder's rungs
    with open(tmp_path / ladder, "a", encoding="utf-8") as handle:
        handle.write("\n")
    (tmp_path / "docs" / "extra.png").write_bytes(b"\x89PNG")
    shot = tmp_path / doc_figures.SCREENSHOTS[1]
    shot.write_bytes(shot.read_bytes() + b"\0")
    stale = doc_figures.stale_images(tmp_path, redraw=False)
    assert any(s.startswith("docs/extra.png: made by no generator") for s in stale)
    assert any(s.startswith(f"{doc_figures.SCREENSHOTS[0]}: made from an earlier {ladder}")
               for s in stale)
    assert any(s.startswith(f"{doc_figures.SCREENSHOTS[1]}: not the image") for s in stale)
    # The viewer's screenshot is made from the games task: an edit to it is found.
    with open(tmp_path / doc_figures.INSPECT_INPUTS[0], "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert any(s.startswith(f"{doc_figures.INSPECT_SHOT}: made from an earlier "
                            f"{doc_figures.INSPECT_INPUTS[0]}")
               for s in doc_figures.stale_images(tmp_path, redraw=False))
