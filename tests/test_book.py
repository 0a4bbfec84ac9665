"""The book builds from a clean output folder with warnings as errors, from the notebooks
that nbval executed in this test run (a notebook that failed there fails the build; run
alone, the build executes every notebook and one that raises fails it), and its pages
work offline in a real browser: no JavaScript error, formulas typeset by the book's own
MathJax, nothing fetched from a CDN, and the live MiniLM panel runs the model in the page
with PyTorch's numbers."""

import base64
import functools
import html as html_module
import io
import json
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
import yaml
from devtools import BROWSER, DevToolsPage
from notebook_run import executed_notebooks
from PIL import Image

from minibert.measure.attention import AttentionWithAndWithoutProjections
from minibert.model.minilm import encode_typed_text, load_minilm

ROOT = Path(__file__).parent.parent
CDN = re.compile(r"""<(?:script|link)[^>]+(?:src|href)=["']https?://""")
JUPYTER_BOOK = shutil.which("jupyter-book") or str(ROOT / ".venv/bin/jupyter-book")


@pytest.fixture(scope="module")
def html(tmp_path_factory, request):
    """The book built once for this module; the folder of its HTML pages. In a test run
    that executes the notebooks, it is rendered from nbval's executions and starts no
    kernel; run alone, the build executes them."""
    output = tmp_path_factory.mktemp("book")
    executed = executed_notebooks(request.config)
    source = ROOT if executed is None else book_source(executed, output / "source")
    result = subprocess.run(
        [JUPYTER_BOOK, "build", str(source), "--path-output", str(output), "-W", "--keep-going"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    log = result.stdout + result.stderr
    assert executed is None or "Executing notebook" not in log, "the build ran a notebook"
    return output / "_build" / "html"


def book_source(executed: Path, folder: Path) -> Path:
    """A copy of the book's sources whose notebooks are the executed ones, with execution
    off (a notebook this session did not run, when it runs only some, stays unexecuted)."""
    folder.mkdir(parents=True)
    for name in ("_toc.yml", "book"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, folder / name)
    (folder / "notebooks").mkdir()
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        ran = executed / notebook.name
        shutil.copy(ran if ran.exists() else notebook, folder / "notebooks" / notebook.name)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    (folder / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return folder


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


def test_a_rebuild_executes_only_the_changed_chapter(tmp_path):
    """The book's execute settings on a two-chapter book: after `jupyter-book clean` (the
    pages go, the execution cache stays) a rebuild executes only the chapter whose code
    changed, and a chapter that raises still fails the build."""
    settings = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]
    (tmp_path / "_config.yml").write_text(yaml.safe_dump({"title": "t", "execute": settings}))
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n- file: a\n- file: b\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    for name in "ab":
        nbformat.write(one_cell_notebook(f"print({name!r})"), tmp_path / f"{name}.ipynb")

    def build():
        subprocess.run([JUPYTER_BOOK, "clean", str(tmp_path)], capture_output=True, check=True)
        result = subprocess.run([JUPYTER_BOOK, "build", str(tmp_path), "-W"],
                                capture_output=True, text=True)
        executed = re.findall(r"(\w)\.ipynb: Executing notebook", result.stdout + result.stderr)
        return result.returncode, sorted(executed)

    assert build() == (0, ["a", "b"])
    nbformat.write(one_cell_notebook("print('b, edited')"), tmp_path / "b.ipynb")
    assert build() == (0, ["b"])
    nbformat.write(one_cell_notebook("1 / 0"), tmp_path / "b.ipynb")
    assert build() == (1, ["b"])


def one_cell_notebook(code: str):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A chapter"),
                                               nbformat.v4.new_code_cell(code)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    return notebook


WIDGETS = ("minibert-explorer", "minibert-head-view")  # their classes (a slider is an explorer)
MOVE_EVERY_CONTROL = """<script>
window.addEventListener("load", function () {
  var report = [], errors = [];
  window.addEventListener("error", function (event) { errors.push(event.message); });
  function view(root) {  // what the reader sees: the figure, or the head view's drawings
    var image = root.querySelector("img");
    if (image) return image.src;
    return Array.prototype.map.call(root.querySelectorAll("canvas"),
                                    function (c) { return c.toDataURL(); }).join();
  }
  document.querySelectorAll("WIDGETS").forEach(function (root, w) {
    root.querySelectorAll("input, select").forEach(function (input) {
      if (input.type === "hidden") return;  // a value the page does not offer to change
      var steps = input.type === "checkbox" ? 2 : (input.options ? input.options.length
                  : Number(input.max) - Number(input.min) + 1);
      var seen = new Set([view(root)]);
      for (var i = 0; i < steps; i++) {
        if (input.type === "checkbox") input.checked = !input.checked;
        else if (input.options) input.selectedIndex = (input.selectedIndex + 1) % steps;
        else input.value = String((Number(input.value) + 1) % steps);
        input.dispatchEvent(new Event(input.type === "range" ? "input" : "change"));
        seen.add(view(root));
      }
      report.push({widget: w, kind: root.className, steps: steps, views: seen.size});
    });
  });
  var out = document.createElement("pre");
  out.id = "moved";
  out.textContent = JSON.stringify({controls: report, errors: errors});
  document.body.appendChild(out);
});
</script>""".replace("WIDGETS", ", ".join("." + name for name in WIDGETS))


def move_every_control(page: Path) -> dict:
    """Open a copy of a built page with a script that moves each widget's every control
    through all its values; what each control showed, and any JavaScript error."""
    moved = page.with_name(page.stem + ".moved.htm")  # not a page of the book
    moved.write_text(page.read_text().replace("</body>", MOVE_EVERY_CONTROL + "</body>"))
    dom, log = open_in_chromium(moved)
    found = re.search(r'<pre id="moved"[^>]*>(.*?)</pre>', dom, re.S)
    assert found, f"{page.name}: the script did not finish\n{log[-2000:]}"
    return json.loads(html_module.unescape(found.group(1)))


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="needs Debian's chromium (.ci/run installs it)")
def test_every_control_on_every_page_changes_what_the_reader_sees(html):
    pages = [p for p in book_pages(html)
             if any(name in p.read_text() for name in WIDGETS)]
    assert len(pages) >= 20  # every chapter has a slider or an explorer
    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(pages, pool.map(move_every_control, pages)))
    explorers = 0
    for page, result in results.items():
        assert result["errors"] == [], f"{page.name}: {result['errors']}"
        assert result["controls"], f"{page.name}: no control found"
        for control in result["controls"]:
            assert control["views"] >= 2, f"{page.name}: a control changes nothing: {control}"
        explorers += any(c["kind"] == "minibert-explorer" for c in result["controls"])
    assert explorers >= 8


def test_every_figure_is_opaque_so_it_reads_in_dark_mode(html):
    """The theme's dark mode darkens the page, not the figures: a figure with a transparent
    background would show black labels on a dark page. Pages, explorers and sliders alike."""
    figures = [Image.open(path) for path in (html / "_images").glob("*.png")]
    for page in book_pages(html):
        figures += [Image.open(io.BytesIO(base64.b64decode(data))) for data in
                    re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page.read_text())]
    assert len(figures) > 100
    for figure in figures:
        alpha = figure.convert("RGBA").getchannel("A")
        assert alpha.getextrema()[0] == 255, f"a figure with a transparent background: {figure}"


LIVE_CHAPTERS = ("01_self_attention_core", "02_no_qkv_projections", "41_real_attention_heads")
PANEL = "document.querySelector('div.minibert-live')"


def test_the_attention_chapters_have_a_live_panel_and_its_files(html):
    for chapter in LIVE_CHAPTERS:
        assert 'class="minibert-live"' in (html / "notebooks" / f"{chapter}.html").read_text()
    live = html / "_static" / "live"
    assert {p.name for p in live.iterdir()} == {
        "runtime.js", "runtime-wasm.js", "minilm-model.js", "minilm-vocab.js",
        "onnxruntime-web-LICENSE.txt"}
    assert "Licence: MIT" in (live / "onnxruntime-web-LICENSE.txt").read_text()


def type_into_panel(page: DevToolsPage, text: str) -> None:
    """Type `text` in the panel's box and press Enter, as a reader does."""
    page.evaluate(f"""(() => {{ const box = {PANEL}.querySelector('input');
        box.value = {json.dumps(text)};
        box.dispatchEvent(new KeyboardEvent('keydown', {{key: 'Enter'}})); return true; }})()""")


def panel_result(page: DevToolsPage) -> dict:
    return json.loads(page.evaluate(f"""(() => {{ const r = {PANEL}.minibertLive.result;
        return JSON.stringify({{tokens: r.tokens, n: r.n, text: r.text, ms: r.ms,
            attentions: Array.from(r.attentions), bare: Array.from(r.bare)}}); }})()"""))


@functools.cache
def minilm():
    model, tokenizer = load_minilm()
    return model.eval(), tokenizer


def pytorch_maps(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """MiniLM's tokens and both attention maps (layers, heads, n, n), in PyTorch."""
    model, tokenizer = minilm()
    batch, tokens = encode_typed_text(tokenizer, text, model.config.max_position_embeddings)
    with torch.no_grad():
        attentions, bare, _ = AttentionWithAndWithoutProjections(model)(**batch)
    return tokens, attentions[:, 0].numpy(), bare[:, 0].numpy()


def assert_matches_pytorch(result: dict) -> float:
    """The page's tokens equal PyTorch's and its maps are within 1e-3; the largest difference."""
    tokens, attentions, bare = pytorch_maps(result["text"])
    assert result["tokens"] == tokens
    worst = 0.0
    for name, expected in (("attentions", attentions), ("bare", bare)):
        found = np.array(result[name]).reshape(expected.shape)
        worst = max(worst, float(np.abs(found - expected).max()))
    assert worst < 1e-3, f"the page's maps differ from PyTorch's by {worst}"
    return worst


@pytest.mark.skipif(BROWSER is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_the_live_panel_runs_minilm_in_the_page_as_pytorch_does(html):
    """Opened from disk with no network: press the button, get MiniLM's maps for the box's
    sentence; type a pair, get its maps; both equal PyTorch's to 1e-3. Bad input gets a
    message and keeps the last maps; the layer and head selectors redraw."""
    page_file = html / "notebooks" / "02_no_qkv_projections.html"
    with DevToolsPage(page_file) as page:
        page.wait_for(f"document.readyState === 'complete' && !!{PANEL}?.minibertLive")
        assert page.evaluate(f"{PANEL}.minibertLive.result") is None  # nothing loads unasked
        page.evaluate(f"{PANEL}.querySelector('button').click(), true")
        _, first_map = page.wait_for(
            f"{PANEL}.minibertLive.runs === 1 || {PANEL}.minibertLive.error", 600)
        assert page.evaluate(f"{PANEL}.minibertLive.error") is None
        first_difference = assert_matches_pytorch(panel_result(page))

        typed = time.monotonic()
        type_into_panel(page, "The bank raised its rates. [SEP] She sat on the river bank.")
        page.wait_for(f"{PANEL}.minibertLive.runs === 2", 60)
        new_sentence = time.monotonic() - typed
        pair = panel_result(page)
        pair_difference = assert_matches_pytorch(pair)

        canvas = f"{PANEL}.querySelector('canvas').toDataURL()"
        views = {page.evaluate(canvas)}
        for select, value in (("select.minibert-live-layer", 3), ("select.minibert-live-head", 5)):
            page.evaluate(f"""(() => {{ const s = {PANEL}.querySelector('{select}');
                s.value = '{value}'; s.dispatchEvent(new Event('change')); return true; }})()""")
            views.add(page.evaluate(canvas))
        assert len(views) == 3, "moving the layer or the head did not redraw the map"

        for bad, message in (("   ", "empty"), ("a [SEP] b [SEP] c", "two joined by [SEP]"),
                             ("word " * 600, "positions")):
            type_into_panel(page, bad)
            page.wait_for(f"({PANEL}.minibertLive.error || '').includes({json.dumps(message)})", 10)
            assert page.evaluate(f"{PANEL}.minibertLive.runs") == 2  # the last maps stay
    print(f"live panel: click to first map {first_map:.1f} s, a new sentence {new_sentence:.2f} s "
          f"(the model's run {pair['ms']:.0f} ms for {pair['n']} tokens); "
          f"largest difference from PyTorch {max(first_difference, pair_difference):.1e}")
