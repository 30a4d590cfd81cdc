"""Make the built book work with no network: nothing a page loads leaves the site.

MathJax: Sphinx's default `mathjax_path` is a CDN address. The PyPI package
`sphinx-mathjax-offline` (pinned in requirements.txt) ships MathJax 3.2.2; we copy
the part of it the book uses into `_build/html/_static/mathjax` and point
`mathjax_path` there. The MathJax 3 configuration that Sphinx 7 and myst-nb write
(`mathjax3_config`) applies unchanged. We copy the files ourselves instead of
loading that package as an extension: its hook copies all 24 MB of MathJax, and
only after a build that succeeded.

Scripts: sphinx-thebe (which Jupyter Book always loads) adds a CDN address and a
loader for live code cells, which the book does not use (`launch_buttons.thebe` is
false); we drop them. Its inline script and sphinx-togglebutton's are also added
twice, and a `const` declared twice is a console error; we keep each script once.

Opened as files: search results fetch each page to show an excerpt, which a browser
refuses for file:// pages (a console error per result); there the excerpts are left out.

Narrow screens: `static/chibigrad.css` wraps long inline code and lets wide blocks scroll
inside themselves, so no page is wider than a phone's screen.
"""

import os
import shutil
from importlib import metadata
from pathlib import Path

from sphinx.util.fileutil import copy_asset

# The combined TeX-to-HTML build, and what it loads on demand: TeX extensions
# (autoload), its web fonts, the context menu and the accessibility tools with the
# speech rule engine's maps (the menu's options load these from [mathjax]/...).
MATHJAX_ENTRY = "tex-chtml.js"
MATHJAX_PARTS = [MATHJAX_ENTRY, "input/tex", "output/chtml", "ui", "a11y", "sre", "adaptors"]


def mathjax_source():
    """The MathJax folder inside the installed sphinx-mathjax-offline package."""
    dist = metadata.distribution("sphinx-mathjax-offline")
    return Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))


STATIC = Path(__file__).resolve().parent / "static"
# searchtools.js reads this option when it shows a result; without it no page is fetched.
# (A top-level const of another script is visible by name, not as a property of window.)
NO_EXCERPTS_FROM_FILES = ('if (location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") '
                          "DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;")


def use_local_mathjax(app, config):
    # A relative mathjax_path names a file under _static (sphinx.ext.mathjax).
    config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"


def copy_mathjax(app, exception):
    if app.builder.format != "html":
        return
    # Our stylesheet, copied on every build (an incremental build keeps an old copy in
    # _static when it comes through html_static_path).
    shutil.copyfile(STATIC / "chibigrad.css", Path(app.outdir) / "_static" / "chibigrad.css")
    source = mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            copy_asset(str(source / part), str(target / part))
        else:
            target.mkdir(parents=True, exist_ok=True)
            copy_asset(str(source / part), str(target))


def is_thebe(asset):
    name = os.path.basename(os.fspath(asset.filename or ""))
    return name.startswith("sphinx-thebe.") or "THEBE_JS_URL" in asset.attributes.get("body", "")


def drop_thebe_and_duplicates(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        kept, seen = [], set()
        for asset in context.get(key, []):
            # An inline script's filename is None or "", depending on who added it.
            identity = (os.fspath(asset.filename or ""), tuple(sorted(asset.attributes.items())))
            if identity not in seen and not is_thebe(asset):
                kept.append(asset)
            seen.add(identity)
        context[key] = kept


def setup(app):
    if not (mathjax_source() / MATHJAX_ENTRY).is_file():
        raise RuntimeError("sphinx-mathjax-offline is not installed: run `make book`, which installs requirements.txt")
    app.connect("config-inited", use_local_mathjax)
    app.add_css_file("chibigrad.css")
    app.add_js_file(None, body=NO_EXCERPTS_FROM_FILES)
    app.connect("html-page-context", drop_thebe_and_duplicates, priority=900)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
