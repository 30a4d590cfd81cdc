"""The built book, opened in a real browser: every page renders, offline.

Builds the book with `make book` when `_build/html` is missing or older than its
sources, serves it on 127.0.0.1 and opens every page of `_toc.yml` in headless
Chromium (Debian's package, driven by Playwright). A page passes when it logs no
console error, every request it makes succeeds and stays on this machine, every
image and inline SVG is there, its math was typeset by the bundled MathJax, and at
400 px wide (a phone) it does not scroll sideways. Every page is also opened as a
file (the built folder without a server) and must log no console error there either;
so must the search page, with results. Screenshots land in `_build/screenshots/`.

The fast checks at the end read the built HTML only: no path of the machine that built
it, no traceback frame inside chibigrad, no link into notebooks/source (the instructor's
notebooks), no "seed" (the book cites its source articles by title).
"""

import fcntl
import functools
import http.server
import re
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
BUILT = ROOT / "_build" / ".book-built"  # touched by `make book` after a build that passed
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
# The flags this offline machine needs (see the environment notes); Playwright adds
# --headless, --no-sandbox and a fresh profile folder of its own.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# What the book is built from: a change to any of these makes `_build/html` stale.
SOURCES = ["_config.yml", "_toc.yml", "requirements.txt", "Makefile", "book", "_ext", "chibigrad"]


def toc_pages():
    """The pages of _toc.yml in reading order, as paths without suffix."""
    def walk(entry):
        if isinstance(entry, dict):
            for key in ("root", "file"):
                if key in entry:
                    yield entry[key]
            for value in entry.values():
                if isinstance(value, (list, dict)):
                    yield from walk(value)
        elif isinstance(entry, list):
            for item in entry:
                yield from walk(item)

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [re.sub(r"\.(md|ipynb)$", "", page) for page in walk(toc)]


def newest_source_mtime():
    times = []
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        times += [p.stat().st_mtime for p in files]
    return max(times)


@pytest.fixture(scope="module")
def site():
    """Build the book if needed and serve it on an ephemeral localhost port."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium not installed: apt-get install -y chromium (CI installs it in .ci/run)")
    pytest.importorskip("playwright", reason="playwright is pinned in requirements.txt: run through `make test`")
    # One build at a time: pytest-xdist workers, or two `make test` in one checkout.
    BUILT.parent.mkdir(exist_ok=True)
    with open(ROOT / "_build" / ".book-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not BUILT.exists() or BUILT.stat().st_mtime < newest_source_mtime():
            build = subprocess.run(["make", "book"], cwd=ROOT, capture_output=True, text=True)
            assert build.returncode == 0, f"`make book` failed:\n{(build.stdout + build.stderr)[-6000:]}"

    handler = functools.partial(QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def browser(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class PageLog:
    """Everything a page reported while it loaded."""

    def __init__(self, page):
        self.errors, self.failed, self.external = [], [], []
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(f"{msg.text} at {msg.location}"))
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        page.on("requestfailed", self._request_failed)
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        # Any request off this machine is recorded and never sent.
        page.route("**/*", self._only_local)

    def _only_local(self, route):
        url = route.request.url
        if urlsplit(url).scheme in ("http", "https") and urlsplit(url).hostname not in LOCAL_HOSTS:
            self.external.append(url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def _request_failed(self, request):
        if request.url not in self.external:
            self.failed.append(f"{request.failure} {request.url}")

    def assert_clean(self):
        assert not self.external, f"requests leaving the machine: {self.external}"
        assert not self.failed, f"failed requests: {self.failed}"
        assert not self.errors, f"console errors: {self.errors}"


def open_page(browser, url, width=1280):
    page = browser.new_page(viewport={"width": width, "height": 900})
    log = PageLog(page)
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, log


# Typesetting is done when MathJax's startup promise settles; a page with no math
# element never loads MathJax (Sphinx adds it only where math occurs).
WAIT_FOR_MATHJAX = """async () => {
    if (!document.querySelector('.math')) return 'no math';
    for (let i = 0; i < 150; i++) {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
            await MathJax.startup.promise;
            return 'typeset';
        }
        await new Promise(r => setTimeout(r, 100));
    }
    return 'MathJax did not load';
}"""

IMAGES_LOADED = """async () => {
    const images = Array.from(document.images);
    images.forEach(img => { img.loading = 'eager'; });
    await Promise.all(images.map(img => img.complete ? null : new Promise(r => {
        img.addEventListener('load', r); img.addEventListener('error', r); })));
    return images.filter(img => img.naturalWidth === 0).map(img => img.currentSrc || img.src);
}"""

# Inline SVGs in the page's content (not the theme's icons) must have drawn something.
EMPTY_SVGS = """() => Array.from(document.querySelectorAll('article svg'))
    .filter(svg => !svg.closest('button, .headerlink, .fa, [class*="icon"]'))
    .filter(svg => svg.childElementCount === 0)
    .map(svg => svg.outerHTML.slice(0, 120))"""


# Elements that reach past the right edge of a narrow window, for the failure message.
TOO_WIDE = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (r.right > width + 1 && r.width > 0 && getComputedStyle(el).visibility !== 'hidden') {
            let inScroller = false;
            for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
                const o = getComputedStyle(p).overflowX;
                if ((o === 'auto' || o === 'scroll' || o === 'hidden') && p.getBoundingClientRect().right <= width + 1) {
                    inScroller = true; break;
                }
            }
            if (!inScroller) out.push(`${el.tagName.toLowerCase()}.${el.className}: right edge ${Math.round(r.right)} px`);
        }
        if (out.length >= 8) break;
    }
    return out;
}"""
PHONE = 400


@pytest.mark.parametrize("page_name", toc_pages())
def test_page_fits_a_phone(browser, site, page_name):
    page, log = open_page(browser, f"{site}/{page_name}.html", width=PHONE)
    try:
        page.evaluate(WAIT_FOR_MATHJAX)
        page.evaluate(IMAGES_LOADED)
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"phone-{page_name.removeprefix('book/').replace('/', '-')}.png")
        assert scroll_width <= PHONE, (f"{page_name} is {scroll_width} px wide at {PHONE} px; too wide: "
                                       f"{page.evaluate(TOO_WIDE)}")
        log.assert_clean()
    finally:
        page.close()


@pytest.mark.parametrize("page_name", toc_pages())
def test_page_opened_as_a_file_logs_no_error(browser, site, page_name):
    page, log = open_page(browser, (HTML / f"{page_name}.html").as_uri())
    try:
        page.evaluate(WAIT_FOR_MATHJAX)
        page.evaluate(IMAGES_LOADED)
        assert not log.errors, f"console errors: {log.errors}"
        assert not log.external, f"requests leaving the machine: {log.external}"
    finally:
        page.close()


def test_search_from_files_logs_no_error(browser, site):
    page, log = open_page(browser, (HTML / "search.html").as_uri() + "?q=gradient")
    try:
        page.wait_for_selector("#search-results ul.search li", timeout=30_000)
        page.wait_for_timeout(1000)  # excerpts, if any, are fetched after the list appears
        assert not log.errors, f"console errors: {log.errors}"
    finally:
        page.close()


@pytest.mark.parametrize("page_name", toc_pages())
def test_page_renders_offline(browser, site, page_name):
    page, log = open_page(browser, f"{site}/{page_name}.html")
    try:
        mathjax = page.evaluate(WAIT_FOR_MATHJAX)
        broken_images = page.evaluate(IMAGES_LOADED)
        empty_svgs = page.evaluate(EMPTY_SVGS)
        math = page.locator("article .math").count()
        typeset = page.locator("article .math mjx-container").count()
        math_errors = page.locator("mjx-merror").count()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"{page_name.removeprefix('book/').replace('/', '-')}.png", full_page=True)

        log.assert_clean()
        assert not broken_images, f"images that did not load: {broken_images}"
        assert not empty_svgs, f"empty inline SVGs: {empty_svgs}"
        assert mathjax != "MathJax did not load", mathjax
        assert typeset == math, f"{typeset} of {math} math elements typeset by MathJax"
        assert not math_errors, f"{math_errors} formulas MathJax could not typeset"
    finally:
        page.close()


SELF_CHECK_CHAPTERS = [name for name in toc_pages()
                       if (ROOT / f"{name}.md").exists() and "\n## Self-check\n" in (ROOT / f"{name}.md").read_text()]


@pytest.mark.parametrize("page_name", SELF_CHECK_CHAPTERS)
def test_self_check_answers_are_hidden_until_clicked(browser, site, page_name):
    """Each self-check answer (a hide-output cell) is collapsed on load and opens on a click, offline."""
    page, log = open_page(browser, (HTML / f"{page_name}.html").as_uri())
    try:
        toggles = page.locator("section#self-check .tag_hide-output details")
        assert toggles.count() == 3, f"{toggles.count()} hidden answers in the self-check of {page_name}"
        for i in range(3):
            toggle = toggles.nth(i)
            output = toggle.locator(".cell_output")
            assert output.count() == 1 and not output.is_visible(), f"answer {i + 1} is shown before a click"
            toggle.locator("summary").click()
            assert output.is_visible(), f"answer {i + 1} stays hidden after a click"
            assert output.inner_text().strip(), f"answer {i + 1} is empty"
        assert not log.errors, f"console errors: {log.errors}"
        assert not log.external, f"requests leaving the machine: {log.external}"
    finally:
        page.close()


def test_root_page_has_inline_and_display_math(browser, site):
    # Keeps the math checks above exercised: book/intro.md has both kinds.
    page, log = open_page(browser, f"{site}/{toc_pages()[0]}.html")
    try:
        assert page.evaluate(WAIT_FOR_MATHJAX) == "typeset"
        assert page.locator("article span.math mjx-container").count() >= 1, "no inline math typeset"
        assert page.locator("article div.math mjx-container[display='true']").count() >= 1, "no display math typeset"
        log.assert_clean()
    finally:
        page.close()


def test_search_finds_the_root_page(browser, site):
    root = toc_pages()[0]
    page, _ = open_page(browser, f"{site}/{root}.html")
    title = page.locator("article h1").first.inner_text()
    page.close()
    word = max(re.findall(r"[A-Za-z]{4,}", title), key=len)
    page, log = open_page(browser, f"{site}/search.html?q={word}")
    try:
        page.wait_for_selector("#search-results ul.search li", timeout=30_000)
        links = page.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.href)")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "search.png", full_page=True)
        assert any(f"{root}.html" in link for link in links), f"searching {word!r} found {links}"
        log.assert_clean()
    finally:
        page.close()


# ---- the built HTML, read as text (fast: no browser) ----

def built_pages():
    return {name: (HTML / f"{name}.html").read_text(encoding="utf-8") for name in toc_pages()}


def visible_text(html):
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_html_has_no_path_of_the_build_machine(site):
    leaks = [str(ROOT), "/tmp/ipykernel", "site-packages", str(Path.home()) + "/"]
    found = {name: [leak for leak in leaks if leak in html] for name, html in built_pages().items()}
    assert not {k: v for k, v in found.items() if v}, found


# A traceback frame or warning location inside chibigrad: IPython's "File .../chibigrad/x.py:12",
# Python's 'File ".../chibigrad/x.py", line 12', a warning's "chibigrad/x.py:12: UserWarning".
INTERNAL_FRAME = re.compile(r'File "?[^\s"]*chibigrad/[\w/]+\.py(:\d+|", line \d+)|'
                            r"chibigrad/[\w/]+\.py:\d+: \w*Warning")


def test_html_shows_no_traceback_frame_inside_chibigrad(site):
    found = {name: INTERNAL_FRAME.findall(visible_text(html)) for name, html in built_pages().items()}
    assert not {k: v for k, v in found.items() if v}, found
    assert any("Traceback" in visible_text(html) for html in built_pages().values()), \
        "no traceback at all: the check above would prove nothing"


def test_html_links_nowhere_into_notebooks_source(site):
    found = {name: re.findall(r'href="[^"]*notebooks/source[^"]*"', html) for name, html in built_pages().items()}
    assert not {k: v for k, v in found.items() if v}, found


def test_html_never_says_seed(site):
    found = {name: re.findall(r"(?i).{30}\bseeds?\b.{30}", visible_text(html)) for name, html in built_pages().items()}
    assert not {k: v for k, v in found.items() if v}, found
