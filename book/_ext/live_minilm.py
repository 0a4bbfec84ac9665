"""The files behind the live MiniLM panel (chapters 01, 02 and 41), written into
_static/live/ when an HTML build finishes: onnxruntime-web's bundle and WebAssembly binary
(from the npm registry, pinned by version and checksum, with its licence), MiniLM exported
to ONNX by minibert, and MiniLM's vocabulary. A page opened from disk may not fetch files,
so each file is a classic script that puts its contents, base64, in a global variable;
book/_static/minibert-live.js loads them when the reader presses the panel's button.

The files are made once per set of inputs and kept in minibert's cache folder
($MINIBERT_CACHE or ~/.cache/minibert): the export takes about 30 s."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

import minibert
from minibert.export import export_attention_onnx
from minibert.model.minilm import load_minilm, minilm_directory
from minibert.training.zoo import cache_directory

ORT_WEB_VERSION = "1.30.0"
ORT_WEB_TARBALL = ("https://registry.npmjs.org/onnxruntime-web/-/"
                   f"onnxruntime-web-{ORT_WEB_VERSION}.tgz")
ORT_WEB_SHA512 = ("sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02"
                  "Vb7QmRMDs1SigqR4CXAfKYQ==")  # the registry's "integrity" of that tarball
ORT_WEB_FILES = {"runtime.js": ("ORT_BUNDLE_B64", "package/dist/ort.wasm.bundle.min.mjs"),
                 "runtime-wasm.js": ("ORT_WASM_B64", "package/dist/ort-wasm-simd-threaded.wasm")}
LIVE_FOLDER = Path("_static") / "live"


def as_script(variable: str, data: bytes | str) -> str:
    """A classic script that sets window[variable] to `data` (bytes as base64)."""
    value = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    return f"window.{variable} = {json.dumps(value)};\n"


def integrity_of(data: bytes) -> str:
    """The npm registry's "integrity" string of some bytes: their sha512, base64."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def checked_download(url: str, integrity: str) -> bytes:
    """The bytes at `url`, refused unless their sha512 is the pinned one."""
    data = urllib.request.urlopen(url, timeout=300).read()
    found = integrity_of(data)
    if found != integrity:
        raise RuntimeError(f"{url} does not have the pinned checksum: got {found}")
    return data


def write_runtime(folder: Path) -> None:
    """onnxruntime-web's ES-module bundle and its wasm binary as scripts, and its licence."""
    archive = tarfile.open(fileobj=io.BytesIO(checked_download(ORT_WEB_TARBALL, ORT_WEB_SHA512)))
    for name, (variable, member) in ORT_WEB_FILES.items():
        (folder / name).write_text(as_script(variable, archive.extractfile(member).read()))
    package = json.loads(archive.extractfile("package/package.json").read())
    (folder / "onnxruntime-web-LICENSE.txt").write_text(  # the package ships no LICENSE file
        f"{package['name']} {package['version']}, from the npm registry ({ORT_WEB_TARBALL}).\n"
        f"Licence: {package['license']}. Copyright (c) Microsoft Corporation.\n"
        f"{package.get('homepage', '')}\n")


def write_model(folder: Path) -> None:
    """MiniLM as ONNX (attention maps with and without W_Q/W_K/W_V, hidden states) and its
    WordPiece vocabulary, as scripts."""
    model, _ = load_minilm()
    with tempfile.TemporaryDirectory() as work:
        onnx_file = export_attention_onnx(model, Path(work) / "minilm.onnx")
        (folder / "minilm-model.js").write_text(as_script("MINILM_B64", onnx_file.read_bytes()))
    vocabulary = (minilm_directory() / "vocab.txt").read_text(encoding="utf-8")
    (folder / "minilm-vocab.js").write_text(as_script("MINILM_VOCAB", vocabulary))


def inputs_key() -> str:
    """A short hash of what the files are made from: the runtime's pin and minibert's code."""
    digest = hashlib.sha256(ORT_WEB_SHA512.encode())
    for source in sorted(Path(minibert.__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def live_files() -> Path:
    """The folder of the panel's files, made now unless the cache holds them already."""
    folder = cache_directory() / f"live-minilm-{inputs_key()}"
    if not (folder / "complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        write_runtime(folder)
        write_model(folder)
        (folder / "complete").touch()
    return folder


def copy_live_files(app, exception):
    if exception is None and app.builder.format == "html":
        shutil.copytree(live_files(), Path(app.outdir) / LIVE_FOLDER,
                        ignore=shutil.ignore_patterns("complete"), dirs_exist_ok=True)


def setup(app):
    app.add_js_file("minibert-live.js")  # builds each panel; loads the big files on demand
    app.add_css_file("minibert-live.css")
    app.connect("build-finished", copy_live_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
