"""What every rendered page needs beyond the theme. MathJax is served from the book's own
static files, so the formulas render with no network (a downloaded copy is complete):
MathJax 2.7.9 comes from the pinned PyPI package jupyter-server-mathjax (Apache-2.0, its
LICENSE copied along) into _static/mathjax/ when the build finishes."""

import shutil
from pathlib import Path

import jupyter_server_mathjax

MATHJAX_FILES = Path(jupyter_server_mathjax.__file__).parent / "static"
# The package ships the HTML-CSS output with the STIX web fonts (woff), which is what the
# book uses; the SVG output is left behind.
UNUSED = shutil.ignore_patterns("SVG")
# MyST marks each page's section tex2jax_ignore and its formulas class "math": typeset
# those (and notebook outputs) only, as MyST's MathJax 3 settings do.
SETTINGS = {"HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None},
            "tex2jax": {"processClass": "math|output_area", "ignoreClass": "tex2jax_ignore"},
            "showMathMenu": False}


def use_local_mathjax(app, config):
    config.mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
    config.mathjax2_config = SETTINGS


def copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / "mathjax"
        shutil.copytree(MATHJAX_FILES, target, ignore=UNUSED, dirs_exist_ok=True)


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    """sphinx-thebe registers its inline settings twice under Jupyter Book, and the second
    copy throws a SyntaxError ("THEBE_JS_URL has already been declared") on every page."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "",
               getattr(script, "attributes", {}).get("body"))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", drop_repeated_scripts)
    app.connect("config-inited", use_local_mathjax)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
