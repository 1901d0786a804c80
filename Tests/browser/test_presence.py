"""Presence shows people, not windows: one avatar per person with a count of their windows,
and a person's carets in different windows labelled with the window they are in. Labels sit
in the margin, never over the text (issue 12)."""

import re

from conftest import Workbench, create_document, open_document, overlap, place_caret
from playwright.sync_api import Page, expect

TEXT = "First line of the plan\nSecond line of the plan\nThird line of the plan\n"
LINE_2 = TEXT.index("Second")
LINE_3 = TEXT.index("Third")


def label_overlaps(page: Page) -> list:
    """Each remote caret label's box, and how much of it covers text, measured on the presence
    layer's copy of the text (it is laid out exactly as the textarea's)."""
    return page.evaluate(
        """() => {
            const mirror = document.querySelector('.pn-presence-mirror');
            const lines = [];
            const walker = document.createTreeWalker(mirror, NodeFilter.SHOW_TEXT);
            for (let node; (node = walker.nextNode());) {
                if (node.parentElement.closest('.pn-remote-label') || !node.data.trim()) continue;
                const range = document.createRange();
                range.selectNodeContents(node);
                lines.push(...[...range.getClientRects()].filter((r) => r.width > 0));
            }
            return [...mirror.querySelectorAll('.pn-remote-label')].map((label) => {
                const box = label.getBoundingClientRect();
                const covered = lines.reduce((sum, r) => sum
                    + Math.max(0, Math.min(box.right, r.right) - Math.max(box.left, r.left))
                    * Math.max(0, Math.min(box.bottom, r.bottom) - Math.max(box.top, r.top)), 0);
                return { text: label.textContent, width: box.width, opacity: getComputedStyle(label).opacity, covered };
            });
        }"""
    )


def test_presence_shows_each_person_once_with_their_windows_told_apart(bench: Workbench, needs):
    needs("documents")
    alice = [bench.open("Alice") for _ in range(3)]
    bob = bench.open("Bob")
    document = create_document(alice[0], "Plan", TEXT)
    for page in [*alice, bob]:
        page.bring_to_front()
        open_document(page, document)

    # One avatar per person: Alice (three windows) and Bob.
    people = alice[0].locator("#participants > li")
    expect(people).to_have_count(2)
    expect(alice[0].locator("#participants")).to_have_attribute("aria-label", "Here: Alice (you) in 3 windows, Bob")
    expect(people.nth(0).locator(".window-count")).to_have_text("3")
    expect(people.nth(1)).to_have_attribute("title", "Bob")
    expect(bob.locator("#participants")).to_have_attribute("aria-label", "Here: Bob (you), Alice in 3 windows")

    # Alice's second and third windows put their carets on lines 2 and 3: Bob sees which
    # window each caret is in, and so does Alice's first window.
    place_caret(alice[1], LINE_2)
    place_caret(alice[2], LINE_3)
    expect(bob.locator(".pn-remote-label")).to_have_text([re.compile(r"^Alice\W*window 2$"), re.compile(r"^Alice\W*window 3$")])
    expect(alice[0].locator(".pn-remote-label")).to_have_text([re.compile(r"^You\W*window 2$"), re.compile(r"^You\W*window 3$")])


def test_caret_labels_leave_the_text_uncovered(bench: Workbench, needs):
    needs("documents")
    alice = bench.open("Alice")
    bob = bench.open("Bob")
    document = create_document(alice, "Margins", TEXT)
    for page in (alice, bob):
        page.bring_to_front()
        open_document(page, document)

    place_caret(bob, LINE_2)  # under "First line", where a label above the caret would sit
    place_caret(alice, LINE_3 + 6, len("line"))
    for page, name in ((alice, "Bob"), (bob, "Alice")):
        expect(page.locator(".pn-remote-label")).to_have_text(name)
        for label in label_overlaps(page):
            assert float(label["opacity"]) > 0.4 and label["width"] > 10, f"the label is not shown: {label}"
            assert label["covered"] == 0, f"the label {label['text']!r} covers {label['covered']:.0f} px² of text"


def test_toasts_leave_the_editor_uncovered(bench: Workbench, needs):
    needs("documents")
    page = bench.open()
    document = create_document(page, "Under the toast", TEXT * 40)
    open_document(page, document)
    page.evaluate("() => import('/app/feedback.js').then((m) => m.toast('Connected again. Everything is up to date.'))")
    toast = page.get_by_test_id("toast")
    expect(toast).to_be_visible()
    covered = overlap(toast.bounding_box(), page.locator("#editor").bounding_box())
    assert covered == 0, f"the toast covers {covered:.0f} px² of the editor"


def test_the_document_list_says_how_many_windows_each_person_has_and_how_many_are_in_use(bench: Workbench, needs):
    needs("documents")
    alice = [bench.open("Alice") for _ in range(2)]
    bob = bench.open("Bob")
    document = create_document(alice[0], "Plan", TEXT)
    for page in alice:
        page.bring_to_front()
        open_document(page, document)
    # Alice works in her first window; her second is open behind it and loses the focus (every
    # headless page has it, so the loss is told as a browser tells it: hasFocus false, a blur).
    alice[0].bring_to_front()
    alice[0].locator("#editor").click()
    alice[1].evaluate("() => { document.hasFocus = () => false; window.dispatchEvent(new Event('blur')); }")
    dot = bob.locator(f'.document-row[data-document-id="{document}"] .document-people .dot[data-user="Alice"]')
    expect(dot).to_have_attribute("title", "Alice — 2 windows, active in 1")
    expect(bob.locator(f'.document-row[data-document-id="{document}"]')).to_have_attribute(
        "aria-label", "Plan, 1 other person here: Alice — 2 windows, active in 1")
    # She leaves the document in one window: one window, in use.
    alice[1].evaluate("() => panes.workspace.closeDocument()")
    expect(dot).to_have_attribute("title", "Alice — 1 window, active")
