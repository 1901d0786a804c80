"""Screenshots of the workspace for the README and docs/client.md: the regular layout, the
compact layout, two people collaborating (one of them in two windows), and the switcher. Written to
$PANES_SCREENSHOTS (e.g. docs/screenshots), or to test-results/browser/screenshots; the test
also checks the scenes it sets up."""

import base64
import os
import re
from pathlib import Path

from conftest import ARTIFACTS, ROOT, Workbench, create_document, open_document, saved
from playwright.sync_api import Page, expect

PLAN = """Q3 Launch Plan

Goal: ship Panes 1.0 to the first ten teams by September 30.

Milestones
• July 12 — feature freeze: windows, drag and drop, shared settings
• August 2 — beta with the design and support teams
• August 23 — performance pass: 10,000 windows per server
• September 16 — documentation, screenshots and the migration guide

Risks
Real-time editing must stay correct when people lose their connection. Every edit made \
offline is kept and sent once the window reconnects, and the server orders all changes.

Owners
Ada — server and storage
Grace — browser client
Linus — benchmarks and operations
"""

DOCUMENTS = [
    ("Offsite Agenda", "Day 1: roadmap review, lunch at the harbour, team retro.\nDay 2: hack day."),
    ("Reading List", "The Mythical Man-Month\nA Philosophy of Software Design\nDesigning Data-Intensive Applications"),
    ("Design Review Notes", "Sidebar: keep it per window.\nSettings: popover on iPad, sheet on iPhone."),
    ("Q3 Launch Plan", PLAN),
]


def output_dir() -> Path:
    target = os.environ.get("PANES_SCREENSHOTS")
    path = (ROOT / target) if target else ARTIFACTS / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


def set_preferences(page: Page, **values) -> None:
    page.evaluate(
        """async (values) => { for (const [key, value] of Object.entries(values)) await panes.client.setPreference(key, value) }""",
        values,
    )


def compose(page: Page, images: list[bytes], path: Path, gap: int = 28, background: str = "#c9d3e0") -> None:
    """Puts window screenshots side by side on a desk, as one picture."""
    tags = "".join(
        f'<img src="data:image/png;base64,{base64.b64encode(image).decode()}">' for image in images
    )
    page.set_content(
        f"""<html><body style="margin:0"><div id="desk" style="background:{background};display:inline-flex;gap:{gap}px;padding:{gap}px">
        <style>img{{border-radius:12px;box-shadow:0 18px 50px rgba(0,0,0,.28),0 0 0 1px rgba(0,0,0,.12)}}</style>
        {tags}</div></body></html>"""
    )
    page.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
    page.locator("#desk").screenshot(path=str(path))


def seed(page: Page) -> dict:
    ids = {title: create_document(page, title, text) for title, text in DOCUMENTS}
    return ids


def put_caret(page: Page, needle: str, length: int = 0) -> None:
    page.bring_to_front()
    page.evaluate(
        """([needle, length]) => {
            const editor = document.querySelector('#editor');
            const at = editor.value.indexOf(needle);
            editor.focus();
            editor.setSelectionRange(at, at + length);
            editor.dispatchEvent(new Event('select'));
        }""",
        [needle, length],
    )


def test_screenshots_of_both_layouts_collaboration_and_the_switcher(bench: Workbench, needs, browser):
    needs("documents", "preferences")
    out = output_dir()

    # Regular: Ada, light theme, word count on, Grace editing the same plan, and a second
    # window of Ada's further down.
    alice = bench.open("Ada")
    ids = seed(alice)
    plan = ids["Q3 Launch Plan"]
    set_preferences(alice, **{"appearance.theme": "light", "editor.showWordCount": True, "editor.fontSize": 15})
    open_document(alice, plan)
    alice.locator("#window-note").fill("Ask Linus for the load-test numbers before Friday.")
    grace = bench.open("Grace")
    set_preferences(grace, **{"appearance.theme": "dark", "editor.fontSize": 15})
    grace.bring_to_front()
    open_document(grace, plan)
    second = bench.open("Ada")
    open_document(second, plan)
    second.locator("#window-note").fill("Second look at the risks")
    put_caret(second, "Real-time editing", len("Real-time editing"))
    put_caret(grace, "performance pass", len("performance pass"))
    put_caret(alice, "Owners")
    expect(alice.locator(".pn-remote-label")).to_have_text(["Grace", re.compile(r"^You\W*window 2$")])
    expect(grace.locator(".pn-remote-label")).to_have_text([re.compile(r"^Ada\W*window 2$"), re.compile(r"^Ada\W*window 1$")])
    expect(alice.locator("#participants")).to_have_attribute("aria-label", "Here: Ada (you) in 2 windows, Grace")
    expect(alice.locator("#word-count")).to_be_visible()
    alice.bring_to_front()
    alice.locator("#editor").evaluate("e => e.blur()")
    alice.screenshot(path=str(out / "regular.png"))

    # The switcher: Ada's windows told apart by their notes and documents.
    offsite = bench.open("Ada")
    offsite.locator("#window-note").fill("Offsite: book the harbour lunch")
    for page in (alice, second, offsite):
        saved(page)
    alice.bring_to_front()
    alice.keyboard.press("Alt+W")
    expect(alice.locator("#switcher .session-note")).to_have_count(3)
    alice.screenshot(path=str(out / "switcher.png"))
    alice.keyboard.press("Escape")
    expect(alice.locator("#switcher")).to_be_hidden()

    # Collaboration: the two windows side by side, each showing the other's place.
    alice.set_viewport_size({"width": 900, "height": 640})
    grace.set_viewport_size({"width": 900, "height": 640})
    for page in (alice, grace):
        page.keyboard.press("Alt+S")  # hide the sidebar: more room for the text
        expect(page.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    put_caret(grace, "performance pass", len("performance pass"))
    put_caret(alice, "Owners")
    grace.locator("#editor").evaluate("e => e.blur()")
    alice.locator("#editor").evaluate("e => e.blur()")
    shots = [alice.screenshot(), grace.screenshot()]
    desk = browser.new_page()
    compose(desk, shots, out / "collaboration.png")

    # Compact: a phone, dark theme, the list and the open document.
    phone = bench.open("Linus", viewport={"width": 390, "height": 780})
    set_preferences(phone, **{"appearance.theme": "dark", "editor.showWordCount": True})
    expect(phone.locator("html")).to_have_attribute("data-theme", "dark")
    expect(phone.locator(".document-row")).to_have_count(len(DOCUMENTS))
    list_view = phone.screenshot()
    open_document(phone, ids["Reading List"])
    phone.locator("#editor").evaluate("e => e.blur()")
    detail_view = phone.screenshot()
    compose(desk, [list_view, detail_view], out / "compact.png", background="#2a2f38")
    desk.close()

    for name in ("regular.png", "compact.png", "collaboration.png", "switcher.png"):
        assert (out / name).stat().st_size > 10_000
