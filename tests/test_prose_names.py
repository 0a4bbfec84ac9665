"""Every minibert name the prose mentions (in backticks, in the chapters' markdown cells and
the book's pages) exists: a renamed or removed module or function fails here, not in a
reader's hands."""

import importlib
import json
import pkgutil
import re
from pathlib import Path

import minibert

ROOT = Path(__file__).parent.parent
DOTTED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
FILES = {"json", "txt", "py", "bin", "safetensors", "ipynb", "md", "onnx"}  # file names, not code
# Dotted names that are not minibert's: other libraries, and the variables of a chapter's
# code (a model's attributes, a config's fields, a checkpoint's parameter names).
ELSEWHERE = {"torch", "nn", "F", "transformers", "finfo", "model", "config", "recipe",
             "tokenizer", "vocab", "embeddings", "LayerNorm", "modules"}
HUGGING_FACE_PARAMETERS = {"attention.output.dense"}  # a path inside HF's BertLayer


def minibert_modules() -> dict[str, object]:
    """Every module of the package, by its short name (zoo, spans, ...)."""
    modules = {}
    for info in pkgutil.walk_packages(minibert.__path__, "minibert."):
        if info.name.endswith("__main__"):
            continue
        modules[info.name.rsplit(".", 1)[-1]] = importlib.import_module(info.name)
    return modules


def prose() -> dict[str, str]:
    texts = {path.name: "\n".join("".join(cell["source"])
                                  for cell in json.loads(path.read_text())["cells"]
                                  if cell["cell_type"] == "markdown")
             for path in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    texts.update({path.name: path.read_text() for path in sorted((ROOT / "book").glob("*.md"))})
    return texts


def resolves(name: str, modules: dict) -> bool:
    root, *rest = name.split(".")
    if root == "exp":  # a chapter's experiment
        from minibert.experiment import Experiment
        root, found = "Experiment", Experiment
    else:
        found = minibert if root == "minibert" else modules.get(root, getattr(minibert, root, None))
    for part in rest:
        if found is None:
            return False
        found = getattr(found, part, None)
        if found is None and root == "minibert":  # a submodule not imported by its parent
            try:
                found = importlib.import_module(name[:name.index(part) + len(part)])
            except ImportError:
                return False
    return found is not None


def test_every_minibert_name_in_the_prose_exists():
    modules = minibert_modules()
    missing = []
    for page, text in prose().items():
        for name in DOTTED.findall(text):
            root, last = name.split(".")[0], name.rsplit(".", 1)[-1]
            if last in FILES or root in ELSEWHERE or name in HUGGING_FACE_PARAMETERS:
                continue
            if not resolves(name, modules):
                missing.append(f"{page}: {name}")
    assert not missing, missing
