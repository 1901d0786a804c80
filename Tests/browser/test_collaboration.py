"""Collaboration: several windows and several people in one document, with presence, and each
window's cursor kept where its owner left it (issue 6)."""

from conftest import Workbench, create_document, open_document, place_caret
from playwright.sync_api import Page, expect


def caret(page: Page) -> list:
    return page.locator("#editor").evaluate("e => [e.selectionStart, e.selectionEnd]")


def test_edits_in_a_appear_in_b_with_bs_cursor_kept_in_place(bench: Workbench, needs):
    needs("documents")
    alice = bench.open("Alice")
    bob = bench.open("Bob")
    document = create_document(alice, "Shared notes", "Hello world")
    open_document(alice, document)
    bob.bring_to_front()
    open_document(bob, document)

    # Bob's caret sits after "Hello"; Alice types before it and after it.
    place_caret(bob, 5)
    place_caret(alice, 0)
    alice.keyboard.type("Big news: ")
    expect(bob.locator("#editor")).to_have_value("Big news: Hello world")
    assert caret(bob) == [15, 15]  # moved with the text it was in

    place_caret(alice, len("Big news: Hello world"))
    alice.keyboard.type(" 😀!")
    expect(bob.locator("#editor")).to_have_value("Big news: Hello world 😀!")
    assert caret(bob) == [15, 15]  # text after it leaves it alone

    # Bob types at his caret; it lands where he was, for both.
    bob.bring_to_front()
    bob.locator("#editor").focus()
    bob.keyboard.type(",")
    expect(alice.locator("#editor")).to_have_value("Big news: Hello, world 😀!")
    assert caret(bob) == [16, 16]

    # Presence: Alice sees Bob's caret with his name, and who is here.
    expect(alice.locator(".pn-remote-caret .pn-remote-label")).to_have_text("Bob")
    expect(bob.locator(".pn-remote-caret .pn-remote-label")).to_have_text("Alice")
    expect(alice.locator("#participants")).to_have_attribute("aria-label", "Here: Alice (you), Bob")

    # Text outside the Basic Multilingual Plane counts as one position on the wire.
    place_caret(alice, 0)
    alice.keyboard.type("🎉")
    expect(bob.locator("#editor")).to_have_value("🎉Big news: Hello, world 😀!")
    assert caret(bob) == [18, 18]  # two UTF-16 units later in Bob's textarea


def test_two_windows_of_one_person_and_a_second_person_converge(bench: Workbench, needs):
    needs("documents")
    first = bench.open("Alice")
    second = bench.open("Alice")
    carol = bench.open("Carol")
    document = create_document(first, "Three editors", "abc")
    for page in (first, second, carol):
        page.bring_to_front()
        open_document(page, document)

    place_caret(first, 3)
    first.keyboard.type("1111")
    place_caret(second, 0)
    second.keyboard.type("2222")
    place_caret(carol, 1)
    carol.keyboard.type("33")

    # Synchronized says a window's own edits are acknowledged, not that the others' have
    # reached it yet: wait until each holds every character typed in any of them.
    typed = len("abc" + "1111" + "2222" + "33")
    for page in (first, second, carol):
        page.wait_for_function(
            "n => panes.workspace.doc.synchronized && [...panes.workspace.doc.text].length === n", arg=typed)
    texts = {page.locator("#editor").input_value() for page in (first, second, carol)}
    final = first.evaluate("() => panes.workspace.doc.text")
    for page in (first, second, carol):
        expect(page.locator("#editor")).to_have_value(final)
    assert sorted(final) == sorted("abc" + "1111" + "2222" + "33"), texts
    expect(carol.locator("#participants li")).to_have_count(2)  # people, not windows
    expect(carol.locator("#participants")).to_have_attribute("aria-label", "Here: Carol (you), Alice in 2 windows")


def test_remote_selections_stay_on_their_text_when_the_window_resizes(bench: Workbench, needs):
    """The editor centres its text with padding, so a wider window changes only the padding;
    the presence layer must follow it, or every remote selection drifts sideways."""
    needs("documents")
    alice = bench.open("Alice")
    bob = bench.open("Bob")
    document = create_document(alice, "Wide", "Milestones: performance pass at 10,000 windows")
    open_document(alice, document)
    bob.bring_to_front()
    open_document(bob, document)
    bob.locator("#editor").focus()
    bob.locator("#editor").evaluate("e => { e.setSelectionRange(12, 28); e.dispatchEvent(new Event('select')) }")
    expect(alice.locator(".pn-remote-selection")).to_have_text("performance pass")

    alice.bring_to_front()
    alice.set_viewport_size({"width": 900, "height": 640})
    # Hide the sidebar (the editor widens, only its padding grows) and compare the paddings the
    # moment the layout settles: when the sidebar's transition ends, plus the frame in which
    # resize observers run. (Later, a label going idle redraws anyway; that must not be needed.)
    paddings = alice.evaluate(
        """() => new Promise((resolve) => {
            const app = document.querySelector('#app');
            app.addEventListener('transitionend', () => requestAnimationFrame(() => requestAnimationFrame(() => {
                const editor = getComputedStyle(document.querySelector('#editor'));
                const mirror = getComputedStyle(document.querySelector('.pn-presence-mirror'));
                resolve([editor.paddingLeft, mirror.paddingLeft]);
            })), { once: true });
            document.dispatchEvent(new KeyboardEvent('keydown', { key: 's', code: 'KeyS', altKey: true, bubbles: true }));
        })"""
    )
    expect(alice.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    assert paddings[0] == paddings[1], f"the presence layer kept padding {paddings[1]}, the editor has {paddings[0]}"
    expect(alice.locator(".pn-remote-selection")).to_have_text("performance pass")
