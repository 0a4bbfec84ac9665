"""The build step behind the live MiniLM panel (book/_ext/live_minilm.py): a download whose
checksum is not the pinned one is refused, and the scripts it writes give back, in a
JavaScript engine, exactly the bytes and text they hold."""

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import live_minilm  # noqa: E402  (a Sphinx extension, not part of the package)


def test_a_download_with_another_checksum_is_refused(tmp_path):
    archive = tmp_path / "runtime.tgz"
    archive.write_bytes(b"what the registry sent")
    url = archive.as_uri()
    assert live_minilm.checked_download(url, live_minilm.integrity_of(b"what the registry sent")) == \
        b"what the registry sent"
    with pytest.raises(RuntimeError, match="pinned checksum"):
        live_minilm.checked_download(url, live_minilm.integrity_of(b"what was pinned"))


@pytest.mark.skipif(not shutil.which("node"), reason="needs node")
def test_the_scripts_hold_the_exact_bytes_and_text(tmp_path):
    data, text = bytes(range(256)) * 3, 'a "quoted" line\nand 中文 [SEP]\n'
    script = tmp_path / "both.js"
    script.write_text(live_minilm.as_script("DATA_B64", data) + live_minilm.as_script("TEXT", text))
    read_back = subprocess.run(
        ["node", "-e", f"globalThis.window = globalThis; require({json.dumps(str(script))});"
                       "console.log(JSON.stringify([window.DATA_B64, window.TEXT]))"],
        capture_output=True, text=True, check=True)
    data_b64, text_back = json.loads(read_back.stdout)
    assert base64.b64decode(data_b64) == data and text_back == text
