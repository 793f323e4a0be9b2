"""A real headless Chromium driven over the DevTools protocol on a pipe (no WebSocket library):
open a page, run script in it, click, take a screenshot, and collect what the page did
(console errors, exceptions, dialogs, every request's URL)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT_S = 30.0  # every wait on the browser is bounded


def find_chromium() -> str | None:
    """Debian's chromium (or CHROMIUM_PATH)."""
    env = os.environ.get("CHROMIUM_PATH")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser answered with an error, or not in time."""


class Browser:
    """One headless Chromium and one page in it."""

    def __init__(self, executable: str, width: int = 1200, height: int = 900) -> None:
        self.executable = executable
        self.size = (width, height)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._replies: dict[int, queue.Queue] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self._loaded = threading.Event()
        self.session = ""

    def __enter__(self) -> Browser:
        self._profile = tempfile.mkdtemp(prefix="chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds() -> None:  # the protocol's pipe: the browser reads fd 3 and writes fd 4
            # Through high numbers first: either end may itself be fd 3 or 4.
            os.dup2(to_browser_r, 103)
            os.dup2(from_browser_w, 104)
            os.dup2(103, 3)
            os.dup2(104, 4)

        self.proc = subprocess.Popen(
            [self.executable, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--metrics-recording-only",
             f"--user-data-dir={self._profile}", f"--window-size={self.size[0]},{self.size[1]}",
             "about:blank"],
            # fds() leaves 3 and 4 inheritable: open across exec without pass_fds, which
            # would need them open in this process too (a shell may have closed them); every
            # descriptor of ours is close-on-exec already.
            preexec_fn=fds, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self._attach()
        except BaseException:
            self.__exit__()  # no browser left behind when the set-up fails
            raise
        return self

    def _attach(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=self.session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.size[0], "height": self.size[1], "deviceScaleFactor": 1,
                   "mobile": self.size[0] < 600}, session=self.session)

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(BrowserError):  # it may be gone already; we wait below
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        os.close(self._to_browser)
        self._reader.join(timeout=5)  # the browser has exited: its pipe is at end of file
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        box = self._replies.get(message["id"])
                    if box is not None:
                        box.put(message)
                else:
                    self.events.append((message.get("method", ""), message.get("params", {})))
                    if message.get("method") == "Page.loadEventFired":
                        self._loaded.set()

    def call(self, method: str, params: dict[str, Any] | None = None, session: str = "",
             timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """Send one command and wait for its answer."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            box: queue.Queue = queue.Queue()
            self._replies[ident] = box
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            reply = box.get(timeout=timeout)
        except queue.Empty:
            raise BrowserError(f"{method}: no answer in {timeout} s") from None
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def open(self, url: str) -> None:
        """Load a page and wait for its load event (scripts have run)."""
        self._loaded.clear()
        self.call("Page.navigate", {"url": url}, session=self.session)
        if not self._loaded.wait(TIMEOUT_S):
            raise BrowserError(f"{url}: not loaded in {TIMEOUT_S} s")

    def js(self, expression: str) -> Any:
        """The value of a script expression in the page."""
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True, "awaitPromise": True},
                           session=self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def key(self, key: str, code: str, key_code: int) -> None:
        """Press and release one key, as a user would."""
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code,
                                                 "windowsVirtualKeyCode": key_code},
                      session=self.session)

    def screenshot(self, path: Path, whole: bool = True) -> Path:
        """The whole page (or only what the window shows) as PNG."""
        shot = self.call("Page.captureScreenshot", {"format": "png",
                                                    "captureBeyondViewport": whole},
                         session=self.session)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def settle(self, seconds: float = 0.3) -> None:
        """Let late events (console, requests) arrive."""
        time.sleep(seconds)

    def errors(self, since: int = 0) -> list[str]:
        """Console errors, uncaught exceptions and log errors from event `since` on."""
        out = []
        for method, p in self.events[since:]:
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(p["exceptionDetails"])[:300])
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(json.dumps(p.get("args"))[:300])
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text", "")[:300])
        return out

    def requests(self, since: int = 0) -> list[str]:
        """The URL of every request made from event `since` on."""
        return [p["request"]["url"] for m, p in self.events[since:]
                if m == "Network.requestWillBeSent"]

    def dialogs(self) -> list[str]:
        """Messages of every alert, confirm or prompt the page opened."""
        return [p.get("message", "") for m, p in self.events
                if m == "Page.javascriptDialogOpening"]
