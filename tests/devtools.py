"""A page in headless chromium that a test drives in real time through the DevTools
protocol: evaluate JavaScript, wait until an expression holds. (`--dump-dom` cannot wait for
work that takes real time, such as compiling WebAssembly and running a model.)"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from tornado.websocket import websocket_connect

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DevToolsPage:
    """`with DevToolsPage(path) as page:` opens the file in chromium; `page.evaluate(js)`
    returns the expression's value (JSON-like), `page.wait_for(js, seconds)` polls until it
    is truthy and returns (value, seconds waited)."""

    def __init__(self, page: Path, width: int = 1100, height: int = 1000):
        self.url, self.size = page.as_uri(), f"{width},{height}"
        self.loop = asyncio.new_event_loop()
        self.calls = 0

    def __enter__(self):
        self.profile = tempfile.mkdtemp()
        port = free_port()
        self.browser = subprocess.Popen(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={port}",
             f"--window-size={self.size}", f"--user-data-dir={self.profile}", self.url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        target = self._page_target(port)
        self.socket = self._run(lambda: websocket_connect(
            target["webSocketDebuggerUrl"], max_message_size=1 << 28))
        return self

    def __exit__(self, *error):
        self.socket.close()
        self.browser.kill()
        self.browser.wait()
        self.loop.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _run(self, start):
        """Call `start` on this page's own event loop and wait for the future it returns."""
        async def waited():
            return await start()
        return self.loop.run_until_complete(waited())

    @staticmethod
    def _page_target(port: int) -> dict:
        for _ in range(150):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as reply:
                    return next(t for t in json.load(reply) if t["type"] == "page")
            except (OSError, StopIteration):
                time.sleep(0.2)
        raise RuntimeError("chromium did not open its DevTools port")

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result."""
        self.calls += 1
        self.socket.write_message(json.dumps({"id": self.calls, "method": method, "params": params}))
        while True:
            reply = json.loads(self._run(self.socket.read_message))
            if reply.get("id") == self.calls:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 120) -> tuple[object, float]:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            value = self.evaluate(expression)
            if value:
                return value, time.monotonic() - started
            time.sleep(0.2)
        raise TimeoutError(f"not true after {seconds} s: {expression[:120]}")

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
