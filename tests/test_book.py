"""The book builds from a clean output folder with warnings as errors, executing every
notebook (a notebook that raises fails the build: execute.raise_on_error), and its pages
work offline in a real browser: no JavaScript error, formulas typeset by the book's own
MathJax, nothing fetched from a CDN."""

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
CDN = re.compile(r"""<(?:script|link)[^>]+(?:src|href)=["']https?://""")


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """The book built once for this module; the folder of its HTML pages."""
    output = tmp_path_factory.mktemp("book")
    jupyter_book = shutil.which("jupyter-book") or str(ROOT / ".venv/bin/jupyter-book")
    result = subprocess.run(
        [jupyter_book, "build", str(ROOT), "--path-output", str(output), "-W", "--keep-going"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    return output / "_build" / "html"


def test_book_builds(html):
    assert (html / "index.html").exists()
    assert sorted(p.stem for p in (html / "notebooks").glob("*.html")) == sorted(
        p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_pages_load_nothing_from_a_cdn(html):
    assert (html / "_static" / "mathjax" / "MathJax.js").exists()
    assert (html / "_static" / "mathjax" / "LICENSE").exists()
    for page in book_pages(html):
        assert not CDN.findall(page.read_text()), f"{page.name} loads a script or style sheet"


def book_pages(html: Path) -> list[Path]:
    return sorted([*html.glob("book/*.html"), *html.glob("notebooks/*.html")])


def open_in_chromium(page: Path) -> tuple[str, str]:
    """The page's DOM after its scripts ran, and what the browser logged (console included)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--virtual-time-budget=30000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    return result.stdout, result.stderr


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_pages_run_without_errors_and_typeset_their_math_offline(html):
    pages = book_pages(html)
    with ThreadPoolExecutor(2) as pool:
        opened = dict(zip(pages, pool.map(open_in_chromium, pages)))
    for page, (dom, log) in opened.items():
        errors = [line for line in log.splitlines() if "CONSOLE" in line and "Uncaught" in line]
        assert not errors, f"{page.name}: {errors}"
        if 'class="math notranslate' in page.read_text():
            assert "MathJax-Element-1" in dom, f"{page.name}: the formulas were not typeset"
            assert "Math Processing Error" not in dom, page.name
