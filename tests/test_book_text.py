"""The book's sources, read as text (fast; the rendered HTML is checked in test_book_browser.py)."""
import json
import re
from pathlib import Path

import pytest
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


def toc_chapters():
    """The chapters of _toc.yml (every page but the root and the references), as paths."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [ROOT / f"{f}.md" for f in files if f != "book/references"]


def cell_tags(cell):
    found = re.search(r"(?m)^:?tags: \[([^\]]*)\]", cell)
    return [t.strip() for t in found.group(1).split(",")] if found else []


@pytest.mark.parametrize("page", toc_chapters(), ids=lambda p: p.stem)
def test_chapter_ends_with_a_self_check(page):
    """Three "predict the output" questions whose answers are hidden outputs, then the chapter's exercises."""
    text = page.read_text()
    sections = re.split(r"(?m)^## ", text)
    assert sections[-1].startswith("Self-check\n"), f"{page.name}: the last section is not '## Self-check'"
    check = sections[-1]
    pieces = re.split(r"(?ms)^```\{code-cell\}[^\n]*\n(.*?)^```\n", check)
    questions, cells = pieces[0::2], pieces[1::2]
    assert len(cells) == 3, f"{page.name}: {len(cells)} code cells in the self-check"
    assert all("hide-output" in cell_tags(c) for c in cells), page.name
    assert all(re.search(r"\*\*\d\.\*\* \S", q) for q in questions[:3]), f"{page.name}: a cell without its question"
    assert re.search(r"(?m)^### Exercises$", questions[3]), f"{page.name}: no Exercises list after the questions"
    link = re.search(r'The assignment `(\w+)`, the notebook <a href="\.\./\.\./\.\./build/student/(\1)/\1\.ipynb"',
                     questions[3])
    own = [a.name for a in (ROOT / "notebooks" / "source_text").iterdir() if a.name.split("_")[0] == page.name.split("_")[0]]
    assert ([link.group(1)] if link else []) == own, f"{page.name}: links to its assignment {own}?"
    if link:  # (a chapter without its own assignment, such as 4b, links to others' without listing them)
        source = (ROOT / "notebooks" / "source_text" / link.group(1) / f"{link.group(1)}.py").read_text()
        solutions = re.findall(r'(?m)^# %% nbgrader="solution" id="([^"]+)"', source)
        listed = re.findall(r"(?m)^- Exercise \d+[^,]*, `([^`]+)`", questions[3])
        assert listed == solutions, f"{page.name}: lists {listed}, the assignment has {solutions}"


COMPILE_PAGE = ROOT / "book" / "07b_compile.md"
COMPILE_RECORD = ROOT / "book" / "data" / "compile_pytorch.json"


def code_cells(text):
    return re.findall(r"(?ms)^```\{code-cell\}[^\n]*\n(.*?)^```", text)


def test_compile_chapter_prints_pytorch_from_its_record():
    """Chapter 7b's PyTorch column is read from the record (scripts/record_compile_pytorch.py), and
    every entry of the record the page reads exists, so no cell prints a hand-typed number."""
    text = COMPILE_PAGE.read_text()
    cells = "\n".join(code_cells(text))
    assert 'json.loads(Path("data/compile_pytorch.json").read_text())' in cells
    record = json.loads(COMPILE_RECORD.read_text())
    reads = re.findall(r'recorded((?:\["[^"]+"\])+)', cells)
    assert len(reads) >= 10, reads
    for path in reads:
        value = record
        for key in re.findall(r'\["([^"]+)"\]', path):
            assert isinstance(value, dict) and key in value, f"recorded{path}: no {key!r} in the record"
            value = value[key]


def test_compile_record_was_made_from_the_chapters_code():
    """The record keeps the chapter's definitions it ran under PyTorch; each is still on the page as
    recorded (a changed step means running scripts/record_compile_pytorch.py again)."""
    record = json.loads(COMPILE_RECORD.read_text())
    cells = code_cells(COMPILE_PAGE.read_text())
    stale = [code.splitlines()[0] for code in record["chapter_code"] if not any(code in cell for cell in cells)]
    assert not stale, f"changed since recorded: {stale}"
    defined = {re.match(r"(?:def |class )?(\w+)", code).group(1) for code in record["chapter_code"]}
    assert {"make_mlp", "SiLUNet", "silu_step", "scaled", "counted", "shout", "checked"} <= defined, defined


@pytest.mark.parametrize("claim", [
    r"replays a\s+`print`",
    r"traces\s+backward\s+separately",
    r"stops\s+at\s+the\s+optimizer",
    r"within\s+a\s+few\s+percent",
])
def test_compile_chapter_drops_claims_pytorch_contradicts(claim):
    """Claims about torch.compile that PyTorch 2.13's recorded behaviour contradicts (issue 23)."""
    assert not re.search(claim, prose(COMPILE_PAGE.read_text())), claim


def test_compile_chapter_explains_cse_before_its_exercise():
    text = prose(COMPILE_PAGE.read_text())
    explained = re.search(r"\*\*Common-subexpression elimination\*\*", text)
    exercise = re.search(r"- Exercise \d+, `cse`", text)
    assert explained and exercise and explained.start() < exercise.start()
def figure_captions(page):
    """The captions of the cells of ``page`` that draw a figure."""
    cells = code_cells(page.read_text())
    return [re.search(r"(?s)caption: \|\n(.*?)\n---", c).group(1) for c in cells
            if re.search(r"^plt\.show\(\)|^viz\.draw\(", c, re.M) and "caption:" in c]


@pytest.mark.parametrize("name, words", [
    ("01b_engine_from_scratch", ["count_dependencies", "ready"]),   # the small engine's graph with its counts
    ("04b_optimizer_step", ["retain_grad", "nodes"]),              # the chain that grows a node per step
    ("06b_forward_mode", ["JVP", "column", "VJP", "row"]),         # one Jacobian, a column and a row
    ("06c_vmap", ["batch dimension", "rule"]),                     # where the batch dim goes through each rule
    ("06c_vmap", ["loop", "vmap", "PyTorch"]),                      # loops against one vmapped pass, both libraries
])
def test_chapter_draws_the_figure_its_idea_needs(name, words):
    captions = figure_captions(ROOT / "book" / f"{name}.md")
    assert any(all(w in c for w in words) for c in captions), f"{name}: no figure about {words}; captions: {captions}"


def test_every_pytorch_fact_a_page_prints_is_in_the_record():
    """Pages read PyTorch's behaviour from book/data/chapter_facts_pytorch.json (scripts/record_chapter_facts.py),
    never from hand-typed numbers: every key they read is there."""
    record = json.loads((ROOT / "book" / "data" / "chapter_facts_pytorch.json").read_text())
    readers = [p for p in PAGES if "chapter_facts_pytorch.json" in p.read_text()]
    assert len(readers) >= 4, [p.name for p in readers]
    for page in readers:
        keys = set(re.findall(r'"(\d\d[a-z]?_[a-z0-9_]+)"', page.read_text()))
        assert keys and keys <= set(record), (page.name, keys - set(record))


VMAP_PAGE = ROOT / "book" / "06c_vmap.md"


def test_vmap_chapter_prints_pytorch_from_its_record():
    """Chapter 6c's PyTorch numbers and fallback warning come from book/data/vmap_pytorch.json
    (scripts/record_vmap_pytorch.py): every entry the page reads is there, and the record ran the
    cases the page times (benchmarks/bench_vmap.py's)."""
    cells = "\n".join(code_cells(VMAP_PAGE.read_text()))
    assert 'json.loads(Path("data/vmap_pytorch.json").read_text())' in cells
    assert "from bench_vmap import jacobian_cases, per_sample_cases" in cells
    record = json.loads((ROOT / "book" / "data" / "vmap_pytorch.json").read_text())
    for path in re.findall(r'recorded((?:\["[^"]+"\])+)', cells):
        value = record
        for key in re.findall(r'\["([^"]+)"\]', path):
            assert isinstance(value, dict) and key in value, f"recorded{path}: no {key!r} in the record"
            value = value[key]
    assert record["per_sample"]["same"] and record["jacobian"]["same"], "PyTorch's ways disagreed when recorded"
    timed = {"per_sample": ["loop", "batch_of_one", "vmap"],
             "jacobian": ["rows", "jacrev", "columns", "jacfwd", "batched_vjp"]}
    for case, names in timed.items():
        assert all(record[case][n]["min"] <= record[case][n]["median"] <= record[case][n]["max"] for n in names)
    assert "performance drop" in record["fallback"]["text"]


@pytest.mark.parametrize("claim", [
    r"each\s+pass\s+cheaper",                  # 6b's old wording: vmap makes one pass, not cheaper passes
    r"loop\s+over\s+(the\s+)?basis\s+vectors",  # jacfwd/jacrev are one vmapped pass in chibigrad too
])
def test_forward_mode_chapters_do_not_say_jacobians_loop(claim):
    for page in ("06b_forward_mode.md", "06c_vmap.md"):
        assert not re.search(claim, prose((ROOT / "book" / page).read_text())), (page, claim)
