"""State restoration: a reloaded tab, a duplicated tab and a restarted server each bring every
window back as it was, keyed by its own session (issue 2, issue 6)."""

import signal
from pathlib import Path

from conftest import (
    Server,
    Workbench,
    create_document,
    long_text,
    open_document,
    saved,
    session_id,
    wait_ready,
)
from playwright.sync_api import expect


def scroll_top(page) -> int:
    return page.locator("#editor").evaluate("e => Math.round(e.scrollTop)")


def selection(page) -> list:
    return page.locator("#editor").evaluate("e => [e.selectionStart, e.selectionEnd, e.selectionDirection]")


def test_reload_restores_the_window_note_and_sidebar(bench: Workbench):
    """Sessions only: the note lives in the restoration activity, the sidebar in userInfo."""
    page = bench.open()
    before = session_id(page)
    page.locator("#window-note").fill("Call Ada about the Q3 plan")
    page.keyboard.press("Alt+S")
    expect(page.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    saved(page)

    page.reload()
    wait_ready(page)

    assert session_id(page) == before
    expect(page.locator("#window-note")).to_have_value("Call Ada about the Q3 plan")
    expect(page.locator("#app")).to_have_attribute("data-sidebar", "hidden")


def test_reload_finds_its_note_and_scroll_position_restored(bench: Workbench, needs):
    """Issue 2's test: the note and the scroll position come back after a reload."""
    needs("documents")
    page = bench.open()
    document = create_document(page, "Long read", long_text(300))
    open_document(page, document)
    page.locator("#window-note").fill("Stopped at line 40")
    page.locator("#editor").evaluate("e => { e.scrollTop = 900 }")
    saved(page)

    page.reload()
    wait_ready(page)

    expect(page.locator("#app")).to_have_attribute("data-document", document)
    expect(page.locator("#window-note")).to_have_value("Stopped at line 40")
    page.wait_for_function("() => Math.round(document.querySelector('#editor').scrollTop) === 900")


def test_reload_restores_each_tabs_own_document_scroll_and_selection(bench: Workbench, needs):
    needs("documents")
    a = bench.open()
    b = bench.open()
    first = create_document(a, "First", long_text(300))
    second = create_document(a, "Second", long_text(250))
    open_document(a, first)
    b.bring_to_front()
    open_document(b, second)

    a.bring_to_front()
    a.evaluate("() => { panes.workspace.editor.focus(); panes.workspace.binding.select({anchor: 10, head: 25}) }")
    a.locator("#editor").evaluate("e => { e.scrollTop = 1200 }")
    a.locator("#window-note").fill("note of A")
    b.bring_to_front()
    b.evaluate("() => { panes.workspace.editor.focus(); panes.workspace.binding.select({anchor: 40, head: 31}) }")
    b.locator("#editor").evaluate("e => { e.scrollTop = 300 }")
    b.locator("#window-note").fill("note of B")
    b.keyboard.press("Alt+S")
    saved(a)
    saved(b)

    for page in (a, b):
        page.bring_to_front()
        page.reload()
        wait_ready(page)

    expect(a.locator("#app")).to_have_attribute("data-document", first)
    expect(b.locator("#app")).to_have_attribute("data-document", second)
    expect(a.locator("#window-note")).to_have_value("note of A")
    expect(b.locator("#window-note")).to_have_value("note of B")
    expect(a.locator("#app")).to_have_attribute("data-sidebar", "shown")
    expect(b.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    assert selection(a) == [10, 25, "forward"]
    assert selection(b) == [31, 40, "backward"]
    a.wait_for_function("() => Math.round(document.querySelector('#editor').scrollTop) === 1200")
    b.wait_for_function("() => Math.round(document.querySelector('#editor').scrollTop) === 300")


def test_duplicated_tab_gets_a_fork_of_the_window(bench: Workbench):
    """A duplicated tab copies sessionStorage; the server forks the session and the copy keeps
    the new identifier, so the two windows never overwrite each other's state."""
    original = bench.open()
    original.locator("#window-note").fill("shared starting point")
    saved(original)
    storage = original.evaluate("() => JSON.stringify(Object.assign({}, sessionStorage))")

    duplicate = bench.watch(bench.context().new_page())
    duplicate.add_init_script(
        f"if (!sessionStorage.length) for (const [k, v] of Object.entries({storage})) sessionStorage.setItem(k, v)"
    )
    duplicate.goto(bench.url())
    wait_ready(duplicate)

    assert duplicate.evaluate("() => panes.client.connectResult.forkedFrom") == session_id(original)
    assert session_id(duplicate) != session_id(original)
    expect(duplicate.locator("#window-note")).to_have_value("shared starting point")
    duplicate.locator("#window-note").fill("the copy's own note")
    saved(duplicate)

    for page in (original, duplicate):
        page.bring_to_front()
        page.reload()
        wait_ready(page)
    expect(original.locator("#window-note")).to_have_value("shared starting point")
    expect(duplicate.locator("#window-note")).to_have_value("the copy's own note")


def test_a_server_restart_keeps_every_window_and_the_edits_made_meanwhile(browser, needs, tmp_path: Path):
    """The server is killed (SIGKILL) and restarted: the page shows that it is reconnecting,
    keeps the edits made meanwhile, sends them once back, and a reload still restores."""
    needs("documents")
    server = Server(tmp_path).start()
    bench = Workbench(browser, server, "restart")
    try:
        page = bench.open()
        document = create_document(page, "Outage", long_text(120))
        open_document(page, document)
        page.locator("#window-note").fill("before the outage")
        page.locator("#editor").evaluate("e => { e.scrollTop = 400 }")
        saved(page)

        server.stop(signal.SIGKILL)
        expect(page.locator("#banner")).to_be_visible()
        expect(page.locator("#banner")).to_contain_text("Reconnecting")
        page.locator("#editor").focus()
        page.keyboard.press("Control+Home")
        page.keyboard.type("Written offline. ")

        server.start()
        expect(page.locator("#banner")).to_be_hidden(timeout=20_000)
        page.wait_for_function("() => panes.workspace.doc.synchronized")
        page.locator("#editor").evaluate("e => { e.scrollTop = 400 }")
        saved(page)

        page.reload()
        wait_ready(page)
        expect(page.locator("#app")).to_have_attribute("data-document", document)
        expect(page.locator("#window-note")).to_have_value("before the outage")
        assert page.locator("#editor").input_value().startswith("Written offline. Line 1:")
        page.wait_for_function("() => Math.round(document.querySelector('#editor').scrollTop) === 400")
        assert not bench.errors, bench.errors
    finally:
        bench.close()
        server.stop()


def test_a_refresh_from_another_window_is_taken_in_and_kept(bench: Workbench, needs):
    """`requestRefresh` of a live window reaches it (`sessionRefreshed`): it shows the new
    activity, and its next save keeps it instead of overwriting it (issue 12)."""
    needs("windows", "documents")
    window, other = bench.open(), bench.open()
    document = create_document(other, "Budget", "Q3 numbers")
    saved(window)
    other.bring_to_front()
    other.evaluate(
        """async ([session, id]) => panes.client.requestRefresh({ session,
             activity: { activityType: 'panes.document', title: 'Budget', targetContentIdentifier: id,
                         userInfo: { note: 'Check with Ada' } } })""",
        [session_id(window), document],
    )
    window.bring_to_front()
    expect(window.locator("#app")).to_have_attribute("data-document", document)
    expect(window.locator("#window-note")).to_have_value("Check with Ada")
    window.locator("#editor").focus()
    window.keyboard.press("End")
    saved(window)

    window.reload()
    wait_ready(window)
    expect(window.locator("#app")).to_have_attribute("data-document", document)
    expect(window.locator("#window-note")).to_have_value("Check with Ada")
