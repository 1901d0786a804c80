"""Documents in the workspace: deleting one confirms it to the person who did it, and tells
everyone else neutrally (issue 12)."""

from conftest import Workbench, create_document, open_document
from playwright.sync_api import expect


def test_deleting_a_document_confirms_it_to_the_deleter_and_tells_the_others(bench: Workbench, needs):
    needs("documents")
    mine, my_other_window, bob = bench.open("Alice"), bench.open("Alice"), bench.open("Bob")
    document = create_document(mine, "Old plan", "obsolete")
    for page in (my_other_window, bob, mine):
        page.bring_to_front()
        open_document(page, document)

    mine.keyboard.press("Alt+Shift+Backspace")  # Delete Document…
    mine.locator("#prompt").get_by_role("button", name="Delete").click()
    expect(mine.get_by_test_id("toast")).to_have_text(["You deleted “Old plan”."])
    expect(my_other_window.get_by_test_id("toast")).to_have_text(["You deleted “Old plan” in another window."])
    expect(bob.get_by_test_id("toast")).to_have_text(["“Old plan” was deleted, so it was closed here."])
    for page in (mine, my_other_window, bob):
        expect(page.locator("#app")).not_to_have_attribute("data-document", document)
        expect(page.locator(f'.document-row[data-document-id="{document}"]')).to_have_count(0)
