"""Documents in the workspace: deleting one confirms it to the person who did it, tells their
other windows (on this device or another) that they did, and tells everyone else who did
(issue 12, issue 13)."""

from conftest import Workbench, create_document, open_document, saved, session_id
from playwright.sync_api import expect


def test_deleting_a_document_confirms_it_to_the_deleter_and_tells_the_others(bench: Workbench, needs):
    needs("documents")
    mine, my_other_window, bob = bench.open("Alice"), bench.open("Alice"), bench.open("Bob")
    # Alice on another device: the server alone can tell it that she deleted the document.
    my_laptop = bench.open_elsewhere("Alice")
    document = create_document(mine, "Old plan", "obsolete")
    for page in (my_other_window, bob, my_laptop, mine):
        page.bring_to_front()
        open_document(page, document)

    mine.keyboard.press("Alt+Shift+Backspace")  # Delete Document…
    mine.locator("#prompt").get_by_role("button", name="Delete").click()
    expect(mine.get_by_test_id("toast")).to_have_text(["You deleted “Old plan”."])
    expect(my_other_window.get_by_test_id("toast")).to_have_text(["You deleted “Old plan” in another window."])
    expect(my_laptop.get_by_test_id("toast")).to_have_text(["You deleted “Old plan” in another window."])
    expect(bob.get_by_test_id("toast")).to_have_text(["Alice deleted “Old plan”."])
    for page in (mine, my_other_window, my_laptop, bob):
        expect(page.locator("#app")).not_to_have_attribute("data-document", document)
        expect(page.locator(f'.document-row[data-document-id="{document}"]')).to_have_count(0)


def test_a_closed_window_of_a_deleted_document_keeps_no_trace_of_it_in_the_switcher(bench: Workbench, needs):
    """Its card no longer names the document or shows its text; its own note stays (issue 13)."""
    needs("documents", "windows")
    closed, switcher = bench.open("Bob"), bench.open("Bob")
    document = create_document(switcher, "Secret plan", "launch codes 1234")
    closed.bring_to_front()
    open_document(closed, document)
    closed.locator("#window-note").fill("Ask Ada first")
    saved(closed)
    closed_session = session_id(closed)
    closed.close()

    switcher.bring_to_front()
    switcher.evaluate("async (id) => panes.client.request('deleteDocument', { document: id })", document)
    switcher.keyboard.press("Alt+W")
    card = switcher.locator(f'#switcher .session-card[data-session="{closed_session}"]')
    expect(card.locator(".session-title")).to_have_text("No document open")
    expect(card.locator(".session-note")).to_have_text("Ask Ada first")
    expect(card).not_to_contain_text("Secret plan")
    expect(card).not_to_contain_text("launch codes")
