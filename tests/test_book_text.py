"""The book's sources, read as text (fast; the rendered HTML is checked in test_book_browser.py)."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "book").glob("*.md"))
PAGES = [p for p in PAGES if p.name != "README.md"]


def prose(text):
    """The markdown outside code cells and fenced code."""
    return re.sub(r"(?ms)^```.*?^```", "", text)


def test_no_page_calls_the_articles_seeds():
    found = {p.name: re.findall(r"(?i).{0,30}\bseeds?\b.{0,30}", p.read_text()) for p in PAGES}
    assert not {k: v for k, v in found.items() if v}, found


def test_no_link_into_the_instructors_notebooks():
    found = {p.name: re.findall(r"\]\([^)]*notebooks/source[^)]*\)|href=\"[^\"]*notebooks/source", p.read_text())
             for p in PAGES}
    assert not {k: v for k, v in found.items() if v}, found


def test_every_chapter_with_an_exercise_links_the_student_edition():
    for page in PAGES:
        text = page.read_text()
        if re.match(r"\d\d_", page.name) and page.name != "00_how_to_use.md":
            assert re.search(r'href="\.\./\.\./\.\./build/student/(\w+)/\1\.ipynb"', text), page.name


def test_references_page_lists_the_five_articles_and_is_in_the_toc():
    text = (ROOT / "book" / "references.md").read_text()
    labels = re.findall(r"(?m)^\((ref-[\w-]+)\)=$", text)
    assert len(labels) == 5, labels
    assert "book/references" in yaml.safe_load((ROOT / "_toc.yml").read_text()).__repr__()
    used = set(re.findall(r"<(ref-[\w-]+)>", "".join(p.read_text() for p in PAGES)))
    assert used == set(labels), (used, labels)


def test_every_figure_cell_has_a_caption():
    """A cell that draws (viz.draw, plt.show) carries a mystnb figure caption."""
    missing = []
    for page in PAGES:
        for cell in re.findall(r"(?ms)^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text()):
            if re.search(r"^viz\.draw\(|^plt\.show\(\)", cell, re.M) and "caption:" not in cell:
                missing.append(f"{page.name}: {cell.strip()[:80]}")
    assert not missing, missing


def test_every_chapter_installs_the_traceback_filter():
    for page in PAGES:
        text = page.read_text()
        if "```{code-cell}" in text and "raises-exception" in text:
            assert "chibigrad.tracebacks.install()" in text, page.name
