"""A headless Chromium driven through the Chrome DevTools protocol, for the HTML report's tests:
load a file from disk, run JavaScript in it, take a screenshot. The websocket client is the
few lines of RFC 6455 the protocol needs (text frames, client masking), so nothing but the
OS package `chromium` is required; tests skip with a reason when it is missing.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1280,1000",
)


def find_chromium() -> str | None:
    """SKILL_EVAL_CHROMIUM, else the first Chromium or Chrome on PATH."""
    chosen = os.environ.get("SKILL_EVAL_CHROMIUM")
    if chosen:
        return chosen
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


class _WebSocket:
    def __init__(self, url: str, timeout: float) -> None:
        rest = url.split("://", 1)[1]
        hostport, path = rest.split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake refused: {head[:80]!r}")

    def _exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("websocket closed")
            out += chunk
        return bytes(out)

    def send(self, text: str) -> None:
        payload, mask = text.encode(), os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (
            bytes([0x80 | n])
            if n < 126
            else bytes([0x80 | 126]) + struct.pack(">H", n)
            if n < 65536
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        )
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self) -> str:
        message = bytearray()
        while True:
            first, second = self._exact(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if first & 0x0F in (0x0, 0x1, 0x2):
                message += payload
                if first & 0x80:
                    return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """`with Browser(binary) as b: b.open(path); b.eval("1+1"); b.screenshot()`."""

    def __init__(self, binary: str, timeout: float = 120.0) -> None:  # polled: loaded is slower
        self.binary, self.timeout, self._id = binary, timeout, 0

    def __enter__(self) -> Browser:
        # A start can fail on a loaded machine (the free port taken before Chromium binds it,
        # a crash at start-up): a fresh profile and port, up to three times.
        for attempt in range(3):
            try:
                return self._start()
            except RuntimeError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _start(self) -> Browser:
        # Chromium's helper processes may still be writing the profile as it is removed
        self._profile = tempfile.TemporaryDirectory(
            prefix="skill-eval-chromium-", ignore_cleanup_errors=True
        )
        with socket.socket() as s:  # a free port; Chromium binds it a moment later
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--remote-debugging-port={port}",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/json/list", timeout=2
                ) as reply:
                    pages = [t for t in json.load(reply) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.__exit__()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.2)
        self.ws = _WebSocket(pages[0]["webSocketDebuggerUrl"], self.timeout)
        return self

    def __exit__(self, *exc: Any) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:  # the renderer and GPU helpers too: they share the browser's session
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._profile.cleanup()

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result") or {})

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(
        self,
        path: Path,
        fragment: str = "",
        ready: str = "document.body && document.body.getAttribute('data-ready') === '1'",
    ) -> None:
        """Load a file from disk afresh (`fragment` after its #) and wait until `ready`."""
        url = path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
        for target, condition in (("about:blank", "true"), (url, ready)):
            self.call("Page.navigate", url=target)
            deadline = time.monotonic() + self.timeout
            while not self.eval(f"location.href === {json.dumps(target)} && !!({condition})"):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{target}: the page never became ready")
                time.sleep(0.05)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])


def png_colours(png: bytes) -> tuple[int, int, int]:
    """(width, height, distinct RGB(A) pixel values) of an 8-bit RGB or RGBA PNG, decoded with
    zlib and the five scanline filters, to tell a drawn page from a blank one."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, bytearray(), 0
    height = channels = 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        body = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(bytes(idat)), width * channels
    previous, colours, at = bytearray(stride), set(), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        colours.update(bytes(line[i : i + channels]) for i in range(0, stride, channels * 7))
        previous = line
    return width, height, len(colours)
