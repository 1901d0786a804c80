"""The browser workspace, unchanged, through the load balancer (issue 11): two tabs that
haproxy sends to two different nodes behave exactly like two tabs on one node, in Debian's
Chromium. The pages, selectors and helpers are the browser tests' own (Tests/browser)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from types import SimpleNamespace
from typing import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from panes_cluster import ROOT, Cluster, Node

# The browser tests' conftest, under a name of its own (this folder has a conftest too).
_spec = importlib.util.spec_from_file_location("browser_pages", ROOT / "Tests" / "browser" / "conftest.py")
pages = sys.modules["browser_pages"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=pages.CHROMIUM, headless=not os.environ.get("PANES_HEADED"),
                                              args=["--disable-gpu", "--no-first-run"])
        yield launched
        launched.close()


def wait_until(condition, what: str, timeout: float = 10) -> None:
    """Polls a condition on the nodes' logs (read by threads of the harness) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


def connects(node: Node, session: str) -> int:
    """How many times a scene of this session connected to the node (its `willConnect` log lines)."""
    return sum(1 for line in list(node.log) if "willConnect" in line and f"session={session}" in line)


def node_of(cluster: Cluster, session: str, before: list[int] | None = None) -> int:
    """The node a tab's socket reached: the one that logged its session's connect (one more
    than `before`, the counts per node, when given)."""
    before = before or [0] * len(cluster.nodes)
    wait_until(lambda: any(connects(node, session) > count for node, count in zip(cluster.nodes, before)),
               f"a node logged a connect of session {session}")
    reached = [node.index for node, count in zip(cluster.nodes, before) if connects(node, session) > count]
    assert len(reached) == 1, f"session {session} connected to nodes {reached} at once"
    return reached[0]


def test_two_tabs_on_two_nodes_behave_like_two_tabs_on_one(pg, browser, workspace):
    # WebSocket upgrades alternate between the nodes (the page loads between them go to either).
    cluster = Cluster(pg, nodes=2, node_args=["--web", str(ROOT / "web")], sockets_apart=True)
    bench = pages.Workbench(browser, SimpleNamespace(url=cluster.public_url), workspace)
    try:
        if os.environ.get("PANES_FRAME_LOG"):
            pages.FrameLog(os.environ["PANES_FRAME_LOG"]).watch_context(bench.context("Alice"))
        a = bench.open("Alice")
        b = bench.open("Alice")
        sessions = {a: pages.session_id(a), b: pages.session_id(b)}
        on = {page: node_of(cluster, sessions[page]) for page in (a, b)}
        assert on[a] != on[b], f"both tabs reached node {on[a]}: this test needs them on two nodes"

        # A document made in one tab is listed in the other; both open it.
        document = pages.create_document(a, "Across nodes", "abc")
        for page in (a, b):
            page.bring_to_front()
            pages.open_document(page, document)

        # A preference toggled in one tab updates the other (test_preferences' controls), both ways.
        a.bring_to_front()
        a.locator("#open-settings").click()
        settings = a.locator("#settings")
        expect(settings).to_be_visible()
        settings.get_by_text("Word count bar").click()
        settings.get_by_role("button", name="Dark").click()
        for page in (a, b):
            expect(page.locator("html")).to_have_attribute("data-theme", "dark")
            expect(page.locator("#word-count")).to_be_visible()
        a.keyboard.press("Escape")
        b.bring_to_front()
        b.keyboard.press("Alt+Comma")
        b.locator("#settings").get_by_role("button", name="Light").click()
        for page in (a, b):
            expect(page.locator("html")).to_have_attribute("data-theme", "light")
        b.keyboard.press("Escape")

        # Edits in both tabs converge (test_collaboration's), and each sees the other's presence.
        pages.place_caret(a, 3)
        a.keyboard.type("1111")
        pages.place_caret(b, 0)
        b.keyboard.type("2222")
        # Synchronized says a tab's own edits are acknowledged, not that the other node's have
        # reached it yet: wait until each tab holds every character typed in either.
        typed = len("abc" + "1111" + "2222")
        for page in (a, b):
            page.wait_for_function(
                "n => panes.workspace.doc.synchronized && [...panes.workspace.doc.text].length === n", arg=typed)
        final = a.evaluate("() => panes.workspace.doc.text")
        for page in (a, b):
            expect(page.locator("#editor")).to_have_value(final)
        assert sorted(final) == sorted("abc" + "1111" + "2222"), final
        for page in (a, b):
            expect(page.locator("#participants")).to_have_attribute("aria-label", "Here: Alice (you) in 2 windows")
            expect(page.locator(".pn-remote-label")).to_have_text(re.compile(r"^You\W*window [12]$"))

        # The switcher in each tab lists both windows (test_switcher's cards).
        for page in (a, b):
            page.bring_to_front()
            page.keyboard.press("Alt+W")
            for window in (a, b):
                expect(page.locator(f'#switcher .session-card[data-session="{sessions[window]}"]')).to_be_visible()
            page.keyboard.press("Escape")

        # Each tab, reloaded (onto the other node: sockets alternate), comes back to its own
        # session, document and note (test_restoration's), not the other tab's.
        notes = {a: "note of A", b: "note of B"}
        for page in (a, b):
            page.bring_to_front()
            page.locator("#window-note").fill(notes[page])
            pages.saved(page)
        for page in (b, a):
            page.bring_to_front()
            counts = [connects(node, sessions[page]) for node in cluster.nodes]
            page.reload()
            pages.wait_ready(page)
            assert pages.session_id(page) == sessions[page]
            assert node_of(cluster, sessions[page], counts) != on[page], "the reload reached the other node"
            expect(page.locator("#app")).to_have_attribute("data-document", document)
            expect(page.locator("#window-note")).to_have_value(notes[page])
            expect(page.locator("#editor")).to_have_value(final)
        assert not bench.errors, "uncaught errors in the pages:\n" + "\n".join(bench.errors)
    finally:
        bench.close()
        cluster.close()
