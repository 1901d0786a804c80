"""Fixtures for the browser tests: the real Panes server and Debian's Chromium driven by
Playwright.

The server binary comes from $PANES_BINARY (default .build/debug/panes under the repository
root); each test run starts it on port 0 with a temporary data directory, serving the
repository's web/. Chromium is /usr/bin/chromium (override with $PANES_CHROMIUM), headless
unless $PANES_HEADED is set. Playwright's own browser downloads are never used.

With $PANES_FRAME_LOG set, every WebSocket message each page sends and receives is recorded
there (`browser-PID.jsonl`, one JSON line per message, named after the test) for
scripts/check_frames.py to validate against PROTOCOL.schema.json.

Every test works in its own workspace (and with its own user names), so tests share one
server without seeing each other's documents, preferences or sessions.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, WebSocket, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("PANES_BINARY", ROOT / ".build" / "debug" / "panes"))
CHROMIUM = os.environ.get("PANES_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-results" / "browser"

expect.set_options(timeout=10_000)


@dataclass
class Server:
    """A running `panes serve`, restartable on the same port and data directory."""

    data: Path
    port: int = 0
    process: subprocess.Popen | None = None
    log_lines: list[str] = field(default_factory=list)
    # More `panes serve` arguments (say `--config FILE`), used from the next start on.
    args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        if not BINARY.exists():
            pytest.exit(f"no server binary at {BINARY}; build it or set PANES_BINARY", returncode=2)
        self.process = subprocess.Popen(
            [str(BINARY), "serve", "--port", str(self.port), "--data", str(self.data), "--web", str(ROOT / "web"), *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        banner = self.process.stdout.readline()
        match = re.search(r"listening on http://[\d.]+:(\d+)", banner)
        if not match:
            self.process.kill()
            rest = self.process.stderr.read()
            raise RuntimeError(f"the server did not start: {banner!r}\n{rest}")
        self.port = int(match.group(1))
        # Keep draining the pipes so the server never blocks on a full one.
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=self._drain, args=(stream,), daemon=True).start()
        return self

    def _drain(self, stream) -> None:
        for line in stream:
            self.log_lines.append(line)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@dataclass
class Capabilities:
    """Which request families the server answers (others get `unknown_type`). All are
    required: `needs` fails a test whose feature is missing."""

    preferences: bool
    windows: bool
    documents: bool

    @staticmethod
    def probe(server: Server) -> "Capabilities":
        from websockets.sync.client import connect

        with connect(server.url.replace("http", "ws") + "/ws", subprotocols=["panes.v1"], open_timeout=5) as ws:
            ids = itertools.count(1)

            def ask(message: dict) -> dict:
                message["id"] = next(ids)
                ws.send(json.dumps(message))
                while True:
                    reply = json.loads(ws.recv(timeout=5))
                    if reply.get("type") == "reply" and reply.get("re") == message["id"]:
                        return reply

            ask({"type": "connect", "protocol": 1, "client": "capability-probe", "workspace": "probe", "auth": {"name": "probe"}})

            def supported(message: dict) -> bool:
                reply = ask(message)
                return reply["ok"] or reply["error"]["code"] != "unknown_type"

            return Capabilities(
                preferences=supported({"type": "setPreference", "domain": "user", "keyPath": "probe.x", "value": 1}),
                windows=supported({"type": "beginDrag", "items": [{"activity": {"activityType": "panes.document"}}]}),
                documents=supported({"type": "observeDocuments"}),
            )


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="panes-browser-") as data:
        running = Server(Path(data)).start()
        yield running
        running.stop()


@pytest.fixture(scope="session")
def capabilities(server: Server) -> Capabilities:
    return Capabilities.probe(server)


@pytest.fixture
def needs(capabilities: Capabilities):
    """`needs("documents", "windows")` fails the test when the server lacks a feature: every
    feature here is implemented, so a request answered with `unknown_type` is a regression,
    and a skip would hide it."""

    def check(*features: str) -> None:
        missing = [f for f in features if not getattr(capabilities, f)]
        if missing:
            pytest.fail(f"the server answers unknown_type for {', '.join(missing)}: a feature this test needs is missing")

    return check


class FrameLog:
    """Records the pages' WebSocket messages (Playwright's `framesent` / `framereceived`) as JSON
    lines in $PANES_FRAME_LOG, each named after the test that was running when its socket opened."""

    def __init__(self, folder: str):
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.file = open(Path(folder) / f"browser-{os.getpid()}.jsonl", "a", encoding="utf-8")
        self.sockets = itertools.count(1)

    def watch_context(self, context: BrowserContext) -> BrowserContext:
        context.on("page", self.watch_page)  # every page, window.open's included
        return context

    def watch_page(self, page: Page) -> None:
        page.on("websocket", self.watch_socket)

    def watch_socket(self, socket: WebSocket) -> None:
        connection = f"browser-{os.getpid()}-{next(self.sockets)}"
        test = os.environ.get("PYTEST_CURRENT_TEST", "(no test)").removesuffix(" (call)").removesuffix(" (setup)")

        def record(direction: str, payload) -> None:
            if isinstance(payload, str):
                line = {"connection": connection, "direction": direction, "test": test, "text": payload}
                self.file.write(json.dumps(line) + "\n")
                self.file.flush()

        socket.on("framesent", lambda payload: record("sent", payload))
        socket.on("framereceived", lambda payload: record("received", payload))


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=not os.environ.get("PANES_HEADED"),
            args=["--disable-gpu", "--no-first-run"],
        )
        if os.environ.get("PANES_FRAME_LOG"):
            # Every context and page the tests make, through the browser, is watched.
            log = FrameLog(os.environ["PANES_FRAME_LOG"])
            new_context, new_page = launched.new_context, launched.new_page
            launched.new_context = lambda *args, **kwargs: log.watch_context(new_context(*args, **kwargs))

            def watched_page(*args, **kwargs) -> Page:
                page = new_page(*args, **kwargs)
                log.watch_page(page)
                return page

            launched.new_page = watched_page
        yield launched
        launched.close()


_workspaces = itertools.count(1)


@pytest.fixture
def workspace(request) -> str:
    """A workspace of this test's own."""
    name = re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:40]
    return f"t{next(_workspaces)}-{name}"


class Workbench:
    """Opens workspace pages in browser contexts (one context per person), and cleans up."""

    def __init__(self, browser: Browser, server: Server, workspace: str):
        self.browser = browser
        self.server = server
        self.workspace = workspace
        self.contexts: dict[str, BrowserContext] = {}
        self.errors: list[str] = []

    def context(self, person: str = "Alice", viewport: dict | None = None) -> BrowserContext:
        if person not in self.contexts:
            context = self.browser.new_context(viewport=viewport or {"width": 1200, "height": 760})
            context.add_init_script(f"localStorage.setItem('panes.name', {json.dumps(person)})")
            self.contexts[person] = context
        return self.contexts[person]

    def url(self, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"workspace": self.workspace, **params}.items())
        return f"{self.server.url}/?{query}"

    def watch(self, page: Page) -> Page:
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        return page

    def open(self, person: str = "Alice", viewport: dict | None = None) -> Page:
        page = self.watch(self.context(person, viewport).new_page())
        page.goto(self.url())
        wait_ready(page)
        return page

    def open_elsewhere(self, person: str = "Alice") -> Page:
        """A window of `person` in a browser context of its own, as on another device: it shares
        nothing with the person's other windows (no storage, no BroadcastChannel) but the server."""
        context = self.browser.new_context(viewport={"width": 1200, "height": 760})
        context.add_init_script(f"localStorage.setItem('panes.name', {json.dumps(person)})")
        self.contexts[f"{person} #{len(self.contexts)}"] = context
        page = self.watch(context.new_page())
        page.goto(self.url())
        wait_ready(page)
        return page

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


@pytest.fixture
def bench(browser: Browser, server: Server, workspace: str) -> Iterator[Workbench]:
    bench = Workbench(browser, server, workspace)
    yield bench
    bench.close()
    assert not bench.errors, "uncaught errors in the page:\n" + "\n".join(bench.errors)


# Helpers shared by the tests.


def wait_ready(page: Page) -> None:
    """Waits until the page is connected and has restored its state."""
    expect(page.locator("#app")).to_have_attribute("data-ready", "true")


def create_document(page: Page, title: str, text: str = "") -> str:
    """Creates a document through the page's client and returns its id."""
    document_id = page.evaluate(
        """async ([title, text]) => (await panes.client.request('createDocument', {title, text})).document.id""",
        [title, text],
    )
    expect(page.locator(f'.document-row[data-document-id="{document_id}"]')).to_be_visible()
    return document_id


def open_document(page: Page, document_id: str) -> None:
    page.locator(f'.document-row[data-document-id="{document_id}"]').click()
    expect(page.locator("#app")).to_have_attribute("data-document", document_id)
    expect(page.locator("#editor")).to_be_visible()


def saved(page: Page) -> None:
    """Waits until the window's state is on the server."""
    page.evaluate("() => panes.workspace.saver.whenSaved()")


def session_id(page: Page) -> str:
    return page.evaluate("() => panes.client.session.persistentIdentifier")


def long_text(lines: int = 200) -> str:
    return "\n".join(f"Line {n}: the quick brown fox jumps over the lazy dog." for n in range(1, lines + 1))


def overlap(a: dict, b: dict) -> float:
    """The area two bounding boxes (`{x, y, width, height}`) share, in square pixels."""
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(width, 0) * max(height, 0)


def place_caret(page: Page, offset: int, length: int = 0) -> None:
    """Puts this window's caret (or a selection) in the editor, and shares it."""
    page.bring_to_front()
    page.locator("#editor").focus()
    page.locator("#editor").evaluate(
        "(e, [start, end]) => { e.setSelectionRange(start, end); e.dispatchEvent(new Event('select')) }",
        [offset, offset + length],
    )
