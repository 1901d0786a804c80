"""Versions in the workspace (issue 25 §4): the history panel saves a version, lists it with
the server's checkpoints, compares two, restores one (every window follows, and Ctrl+Z takes
the restore back), and opens one read-only in a window of its own beside the live document."""

import re

from conftest import Workbench, create_document, open_document, wait_ready
from playwright.sync_api import Page, expect


def type_at_end(page: Page, text: str) -> None:
    page.bring_to_front()
    page.locator("#editor").focus()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def all_saved(page: Page) -> None:
    page.wait_for_function("() => panes.workspace.doc?.status === 'open' && panes.workspace.doc.synchronized")


def open_history(page: Page) -> None:
    page.bring_to_front()
    page.locator("#open-history").click()
    expect(page.locator("#history")).to_be_visible()


def save_version(page: Page, name: str) -> None:
    page.get_by_role("button", name="Save Version…").click()
    page.locator("#prompt input").fill(name)
    page.locator("#prompt button[type=submit]").click()
    expect(page.locator("#history .history-row", has_text=name)).to_be_visible()


def row(page: Page, name: str):
    return page.locator("#history .history-row", has_text=name)


def test_the_history_panel_saves_compares_and_restores_and_undo_takes_the_restore_back(bench: Workbench, needs):
    needs("documents")
    alice = bench.open("Alice")
    document = create_document(alice, "History", "alpha\n")
    open_document(alice, document)
    bob = bench.open("Bob")
    open_document(bob, document)

    open_history(alice)
    expect(alice.locator("#history .history-empty")).to_be_visible()
    save_version(alice, "First")
    alice.keyboard.press("Escape")
    type_at_end(alice, "beta\n")
    all_saved(alice)
    open_history(alice)
    save_version(alice, "Second")

    # Compare: the older text with what the newer one added.
    row(alice, "First").get_by_role("checkbox").check()
    row(alice, "Second").get_by_role("checkbox").check()
    alice.get_by_role("button", name="Compare").click()
    diff = alice.get_by_test_id("history-diff")
    expect(diff.locator("ins")).to_have_text("beta\n")
    expect(diff).to_contain_text("From “First” to “Second”")
    alice.keyboard.press("Escape")
    expect(alice.locator("#history")).to_be_hidden()

    # Bob types meanwhile; restoring "First" takes the text back for everyone.
    type_at_end(bob, "BOB")
    all_saved(bob)
    expect(alice.locator("#editor")).to_have_value("alpha\nbeta\nBOB")
    open_history(alice)
    row(alice, "First").get_by_role("button", name="Restore").click()
    expect(alice.get_by_test_id("toast").filter(has_text="Restored “First”")).to_be_visible()
    expect(alice.locator("#editor")).to_have_value("alpha\n")
    expect(bob.locator("#editor")).to_have_value("alpha\n")
    # What was there before the restore was kept as a checkpoint.
    expect(alice.locator('#history .history-row[data-kind="checkpoint"]')).to_have_count(1)

    # The restore is Alice's edit: her Ctrl+Z takes it back, Bob's words included.
    alice.keyboard.press("Escape")
    alice.locator("#editor").focus()
    alice.keyboard.press("Control+z")
    expect(alice.locator("#editor")).to_have_value("alpha\nbeta\nBOB")
    expect(bob.locator("#editor")).to_have_value("alpha\nbeta\nBOB")


def test_a_version_opens_read_only_in_its_own_window_beside_the_live_document(bench: Workbench, needs):
    needs("documents", "windows")
    page = bench.open()
    document = create_document(page, "Beside", "as it was")
    open_document(page, document)
    open_history(page)
    save_version(page, "Then")
    page.keyboard.press("Escape")
    type_at_end(page, " and now")
    all_saved(page)

    open_history(page)
    with page.context.expect_page() as opened:
        row(page, "Then").get_by_role("button", name="Open").click()
    window = bench.watch(opened.value)
    wait_ready(window)
    version_text = window.get_by_test_id("version-text")
    expect(version_text).to_have_value("as it was")
    expect(version_text).to_have_attribute("readonly", "")
    expect(window.locator("#version-view")).to_contain_text("Read-only")
    expect(window).to_have_title(re.compile("Beside — Then"))
    expect(window.locator("#editor-wrap")).to_be_hidden()
    # The live document is untouched, in its own window.
    page.bring_to_front()
    expect(page.locator("#editor")).to_have_value("as it was and now")

    # Reloaded, the version's window comes back as the version's.
    window.reload()
    wait_ready(window)
    expect(window.get_by_test_id("version-text")).to_have_value("as it was")
    assert window.evaluate("() => panes.client.session.configuration") == "version"
