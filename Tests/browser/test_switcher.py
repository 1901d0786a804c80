"""The switcher tells windows apart: each card shows the window's document (or that it has
none), a preview, its note (the session's subtitle, so every window of the user sees it, on
any device), and when it was last active (issue 12)."""

from conftest import Workbench, create_document, open_document, saved, session_id
from playwright.sync_api import expect


def test_switcher_cards_show_what_differs_between_windows(bench: Workbench, needs):
    needs("windows", "documents")
    noted, plain, empty, bare = (bench.open() for _ in range(4))
    plan = create_document(noted, "Plan", "Q3 goals: ship the switcher")
    blank = create_document(noted, "Untitled", "")
    for page, document in ((noted, plan), (plain, plan), (empty, blank)):
        page.bring_to_front()
        open_document(page, document)
    noted.locator("#window-note").fill("Compare with last year")
    bare.bring_to_front()
    bare.locator("#window-note").fill("Scratch: call Ada")
    for page in (noted, plain, empty, bare):
        saved(page)

    bare.keyboard.press("Alt+W")
    card = lambda page: bare.locator(f'#switcher .session-card[data-session="{session_id(page)}"]')  # noqa: E731
    expect(card(noted).locator(".session-title")).to_have_text("Plan")
    expect(card(noted).locator(".session-note")).to_have_text("Compare with last year")
    expect(card(noted).locator(".session-snapshot")).to_have_text("Q3 goals: ship the switcher")
    expect(card(plain).locator(".session-title")).to_have_text("Plan")
    expect(card(plain).locator(".session-note")).to_have_count(0)
    expect(card(plain).locator(".session-time")).to_have_text("just now")
    expect(card(empty).locator(".session-title")).to_have_text("Untitled")
    expect(card(empty).locator(".session-snapshot")).to_have_text("Empty document")
    expect(card(bare).locator(".session-title")).to_have_text("No document open")
    expect(card(bare).locator(".session-note")).to_have_text("Scratch: call Ada")
    texts = [card(page).inner_text() for page in (noted, plain, empty, bare)]
    assert len(set(texts)) == 4, f"two cards read the same: {texts}"


def test_a_note_typed_on_one_device_shows_in_the_switcher_of_another(bench: Workbench, needs):
    needs("windows")
    desk, laptop = bench.open("Alice"), bench.open_elsewhere("Alice")
    desk.bring_to_front()
    desk.locator("#window-note").fill("Call Ada about the budget\nand the plan")
    saved(desk)

    laptop.bring_to_front()
    laptop.keyboard.press("Alt+W")
    card = laptop.locator(f'#switcher .session-card[data-session="{session_id(desk)}"]')
    expect(card.locator(".session-note")).to_have_text("Call Ada about the budget")

    # A change reaches a switcher that is already open.
    desk.bring_to_front()
    desk.locator("#window-note").fill("Budget sent")
    saved(desk)
    expect(card.locator(".session-note")).to_have_text("Budget sent")
