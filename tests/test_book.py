"""The book builds from a clean output folder with warnings as errors, executing every
notebook (a notebook that raises fails the build: execute.raise_on_error)."""

import shutil
import subprocess
from pathlib import Path


def test_book_builds(tmp_path):
    root = Path(__file__).parent.parent
    jupyter_book = shutil.which("jupyter-book") or str(Path(root, ".venv/bin/jupyter-book"))
    result = subprocess.run(
        [jupyter_book, "build", str(root), "--path-output", str(tmp_path), "-W", "--keep-going"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert (tmp_path / "_build" / "html" / "index.html").exists()
    html = (tmp_path / "_build" / "html" / "notebooks")
    assert sorted(p.stem for p in html.glob("*.html")) == sorted(
        p.stem for p in (root / "notebooks").glob("*.ipynb"))
