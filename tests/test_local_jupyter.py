"""The intro's local command, `jupyter lab notebooks/`, starts a server on a fresh install:
JupyterLab's page is served and it lists the book's chapters."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


def test_jupyter_lab_serves_the_chapters(tmp_path):
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    port, token = free_port(), "minibert-test"
    server = subprocess.Popen(
        [jupyter, "lab", "notebooks/", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", "--allow-root"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)},
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):  # the first start on a fresh install can take a while
            try:
                status, listing = fetch(f"{base}/api/contents?token={token}")
                break
            except OSError:
                assert server.poll() is None, "jupyter lab exited while starting"
                time.sleep(0.5)
        else:
            raise AssertionError("jupyter lab did not answer within a minute")
        names = {item["name"] for item in json.loads(listing)["content"]}
        assert status == 200 and "01_self_attention_core.ipynb" in names
        status, page = fetch(f"{base}/lab?token={token}")
        assert status == 200 and b"JupyterLab" in page
    finally:
        server.terminate()
        server.wait(timeout=30)
