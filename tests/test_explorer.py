"""Explorers: the callback computes live, refused input shows a message, and the static
page holds one figure per combination that its own controls reach in a real browser."""

import json
import re
import shutil
import subprocess

import matplotlib.pyplot as plt
import pytest

from minibert.viz import explorer


def draw(n, masked, sentence):
    """A figure naming its inputs; refuses an empty sentence as a callback should."""
    if not sentence.strip():
        raise ValueError("type a sentence: the box is empty")
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.set_title(f"{n} {masked} {sentence}")
    return fig


def make():
    return explorer.Explorer(
        draw, n=explorer.number(range(9), static=[0, 4, 8], start=4, label="padding"),
        masked=explorer.toggle("mask"), sentence=explorer.text(["a cat", "the dog"]))


def test_the_static_grid_has_one_frame_per_combination_and_starts_where_asked():
    page = make().static_html()
    sources = json.loads(re.search(r"sources = (\{.*?\});", page).group(1))
    assert sorted(sources) == sorted(f"{i},{j},{k}" for i in range(3) for j in range(2)
                                     for k in range(2))
    assert len(set(sources.values())) == 12  # every combination draws its own figure
    first = re.search(r'<img[^>]*src="([^"]+)"', page).group(1)
    assert first == sources["1,0,0"]  # padding 4, masked, the first sentence
    assert "http" not in page and not re.search(r"<script[^>]*\bsrc=", page)
    assert page.count("data-control=") == 3


def test_the_live_view_recomputes_and_shows_refused_input_as_a_message():
    pytest.importorskip("ipywidgets")
    view = make()
    box = view.widget()
    padding, mask, sentence, message, image = box.children
    assert len(view.timings) == 1 and image.value  # drawn once at the start
    padding.value = 7  # a value the static page does not offer
    assert len(view.timings) == 2 and message.value == ""
    sentence.value = "   "
    assert "empty" in message.value and image.layout.display == "none"
    sentence.value = "a bird sings"
    assert message.value == "" and image.layout.display is None and len(view.timings) == 3


def test_a_control_with_one_static_value_is_shown_as_text_and_keeps_its_place():
    view = explorer.Explorer(draw, n=explorer.number(range(9), static=[2], label="padding"),
                             masked=explorer.toggle("mask"), sentence=explorer.text(["a"]))
    page = view.static_html()
    sources = json.loads(re.search(r"sources = (\{.*?\});", page).group(1))
    assert sorted(sources) == ["0,0,0", "0,1,0"]
    assert 'type="hidden" data-control="n"' in page and "padding: 2 (other values" in page


def test_a_first_value_outside_the_static_grid_is_refused():
    with pytest.raises(ValueError, match="must be one of its static values"):
        explorer.number(range(9), static=[0, 4], start=5, label="padding")
    with pytest.raises(ValueError, match="at least one control"):
        explorer.Explorer(draw)


MOVE_EVERY_CONTROL = """<script>
window.addEventListener("load", function () {
  var root = document.querySelector(".minibert-explorer"), image = root.querySelector("img");
  var controls = [], errors = [];
  window.onerror = function (message) { errors.push(message); };
  root.querySelectorAll("[data-control]").forEach(function (input) {
    var steps = input.type === "checkbox" ? 2 : (input.options ? input.options.length
                : Number(input.max) + 1);
    var shown = new Set();  // the figures this control alone showed
    for (var i = 0; i < steps; i++) {
      if (input.type === "checkbox") input.checked = !input.checked;
      else input.value = String((Number(input.value) + 1) % steps);
      input.dispatchEvent(new Event(input.type === "range" ? "input" : "change"));
      if (image.src.indexOf("data:image/png") === 0) shown.add(image.src);
    }
    controls.push({name: input.dataset.control, steps: steps, figures: shown.size});
  });
  var result = document.createElement("pre");
  result.id = "result";
  result.textContent = JSON.stringify({controls: controls, errors: errors});
  document.body.appendChild(result);
});
</script>"""


@pytest.mark.skipif(not shutil.which("chromium"), reason="needs Debian's chromium")
def test_every_control_changes_the_figure_in_a_real_browser(tmp_path):
    page = tmp_path / "explorer.html"
    page.write_text(f"<html><body>{make().static_html()}{MOVE_EVERY_CONTROL}</body></html>")
    dom = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120).stdout
    result = json.loads(re.search(r'<pre id="result">(.*?)</pre>', dom, re.S).group(1))
    assert result["errors"] == []
    # Each control, moved through all its values, showed a different figure for each.
    assert [(c["name"], c["figures"]) for c in result["controls"]] == [
        ("n", 3), ("masked", 2), ("sentence", 2)]
