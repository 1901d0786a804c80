"""What a person types is kept until the server has it, and undo takes back one's own words
(issue 25): text typed while the server is down survives a reload, and a tab closed and
reopened from the switcher, and arrives once; a duplicated tab sends nothing twice; Ctrl+Z,
Shift+Ctrl+Z, Ctrl+Y and the browser's own undo events undo this window's edits only."""

import re

from conftest import Server, Workbench, create_document, open_document, session_id, wait_ready
from playwright.sync_api import Error, Page, expect


def all_saved(page: Page) -> None:
    """Waits until the window's open document has every local edit acknowledged."""
    page.wait_for_function("() => panes.workspace.doc?.status === 'open' && panes.workspace.doc.synchronized")


def server_text(reader: Page, document: str) -> str:
    """The document as another person's window opens it from the server."""
    return reader.evaluate("async (id) => (await panes.client.openDocument(id)).text", document)


def type_at_end(page: Page, text: str) -> None:
    page.bring_to_front()
    page.locator("#editor").focus()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def kept(page: Page, document: str) -> int:
    """How many unsent edits this window keeps in IndexedDB for the document."""
    return page.evaluate(
        """async (id) => {
          const db = await new Promise((resolve, reject) => {
            const r = indexedDB.open('panes-pending');
            r.onsuccess = () => resolve(r.result);
            r.onerror = () => reject(r.error);
          });
          if (!db.objectStoreNames.contains('windows')) return 0;
          const key = [panes.client.session.persistentIdentifier, id];
          const record = await new Promise((resolve) => {
            const r = db.transaction('windows').objectStore('windows').get(key);
            r.onsuccess = () => resolve(r.result);
          });
          db.close();
          return record ? record.pending.length : 0;
        }""",
        document,
    )


def open_new_document(bench: Workbench, title: str) -> tuple[Page, str]:
    """A window showing a new document whose text is "start"."""
    page = bench.open()
    document = create_document(page, title, "start")
    open_document(page, document)
    return page, document


def test_text_typed_while_the_server_is_down_survives_a_reload_and_arrives_once(bench: Workbench, server: Server, needs):
    needs("documents")
    page, document = open_new_document(bench, "Offline")
    server.stop()
    try:
        type_at_end(page, " typed offline")
        expect(page.locator("#editor")).to_have_value("start typed offline")
        page.wait_for_function(
            "async (id) => (await new Promise((r) => { const q = indexedDB.open('panes-pending'); q.onsuccess = () => r(q.result); }))"
            ".objectStoreNames.contains('windows')",
            arg=document,
        )
        try:
            page.reload()  # the server is down: the browser shows its error page
        except Error:
            pass
        # reload() can raise before the error page commits; a goto started before that commit
        # is "interrupted by another navigation to chrome-error://chromewebdata/" (seen in CI).
        expect(page).to_have_url("chrome-error://chromewebdata/")
    finally:
        server.start()
    page.goto(bench.url())
    # The workbench's init script (it sets the name in localStorage) fails on the browser's
    # error page, which is not ours.
    bench.errors[:] = [e for e in bench.errors if not e.startswith("chrome-error://")]
    wait_ready(page)
    expect(page.locator("#app")).to_have_attribute("data-document", document)
    expect(page.locator("#editor")).to_have_value("start typed offline")
    all_saved(page)
    reader = bench.open("Bob")
    assert server_text(reader, document) == "start typed offline"
    assert kept(page, document) == 0


def test_a_tab_closed_while_the_server_was_down_sends_its_text_once_reopened_from_the_switcher(
    bench: Workbench, server: Server, needs
):
    needs("documents", "windows")
    main = bench.open()
    document = create_document(main, "Closed", "start")
    with main.context.expect_page() as opened:
        main.keyboard.press("Alt+Shift+N")  # New Window
    child = bench.watch(opened.value)
    wait_ready(child)
    open_document(child, document)
    child_session = session_id(child)
    server.stop()
    try:
        type_at_end(child, " from the closed tab")
        expect(child.locator("#editor")).to_have_value("start from the closed tab")
        child.close()
    finally:
        server.start()
    main.bring_to_front()
    main.wait_for_function("() => panes.client.status === 'connected'", timeout=10_000)
    main.locator("#open-switcher").click()
    card = main.locator(f'#switcher .session-card[data-session="{child_session}"]')
    expect(card.locator(".session-state")).to_have_text("Closed")
    with main.context.expect_page() as reopened:
        card.locator(".session-open").click()
    again = bench.watch(reopened.value)
    wait_ready(again)
    assert session_id(again) == child_session
    expect(again.locator("#editor")).to_have_value("start from the closed tab")
    all_saved(again)
    reader = bench.open("Bob")
    assert server_text(reader, document) == "start from the closed tab"


def test_a_duplicated_tab_sends_nothing_twice(bench: Workbench, server: Server, needs):
    needs("documents")
    page, document = open_new_document(bench, "Duplicated")
    server.stop()
    try:
        type_at_end(page, " once")
    finally:
        server.start()
    all_saved(page)
    # The duplicate's frames, from its first socket on.
    edits: list[str] = []

    def watch(popup: Page) -> None:
        popup.on(
            "websocket",
            lambda socket: socket.on(
                "framesent", lambda payload: edits.append(payload) if '"type":"edit"' in str(payload) else None
            ),
        )

    page.context.on("page", watch)
    with page.context.expect_page() as opened:
        page.evaluate("() => window.open(location.href)")  # copies sessionStorage, as a duplicated tab does
    duplicate = bench.watch(opened.value)
    wait_ready(duplicate)
    assert session_id(duplicate) != session_id(page), "a fork, not the original's session"
    expect(duplicate.locator("#app")).to_have_attribute("data-document", document)
    expect(duplicate.locator("#editor")).to_have_value("start once")
    all_saved(duplicate)
    assert edits == []
    reader = bench.open("Bob")
    assert server_text(reader, document) == "start once"


def test_ctrl_z_takes_back_ones_own_words_and_leaves_the_others(bench: Workbench, needs):
    needs("documents")
    alice = bench.open()
    document = create_document(alice, "Undo", "")
    open_document(alice, document)
    bob = bench.open("Bob")
    open_document(bob, document)

    type_at_end(alice, "alpha ")
    type_at_end(alice, "beta ")
    expect(bob.locator("#editor")).to_have_value("alpha beta ")
    type_at_end(bob, "BOB")
    expect(alice.locator("#editor")).to_have_value("alpha beta BOB")

    alice.bring_to_front()
    alice.locator("#editor").focus()
    alice.keyboard.press("Control+z")
    expect(alice.locator("#editor")).to_have_value("alpha BOB")
    alice.keyboard.press("Control+z")
    expect(alice.locator("#editor")).to_have_value("BOB")
    expect(bob.locator("#editor")).to_have_value("BOB")

    alice.keyboard.press("Control+Shift+z")
    expect(alice.locator("#editor")).to_have_value("alpha BOB")
    alice.keyboard.press("Control+y")
    expect(alice.locator("#editor")).to_have_value("alpha beta BOB")
    expect(bob.locator("#editor")).to_have_value("alpha beta BOB")

    # The browser's own undo and redo (Edit menu, a touch gesture) arrive as input events.
    history = "(e, type) => e.dispatchEvent(new InputEvent('beforeinput', { inputType: type, cancelable: true, bubbles: true }))"
    alice.locator("#editor").evaluate(history, "historyUndo")
    expect(alice.locator("#editor")).to_have_value("alpha BOB")
    alice.locator("#editor").evaluate(history, "historyRedo")
    expect(alice.locator("#editor")).to_have_value("alpha beta BOB")

    # Bob's Ctrl+Z takes back his, not hers.
    bob.bring_to_front()
    bob.locator("#editor").focus()
    bob.keyboard.press("Control+z")
    expect(bob.locator("#editor")).to_have_value("alpha beta ")
    expect(alice.locator("#editor")).to_have_value("alpha beta ")

    # The help overlay lists them.
    alice.bring_to_front()
    alice.locator("#editor").blur()
    alice.keyboard.press("Alt+Slash")
    help_overlay = alice.locator("#help")
    expect(help_overlay).to_be_visible()
    expect(help_overlay).to_contain_text("Undo")
    expect(help_overlay).to_contain_text(re.compile(r"Ctrl\+Z"))
    expect(help_overlay).to_contain_text("Ctrl+Y")


def test_the_undo_history_survives_a_reload(bench: Workbench, needs):
    needs("documents")
    page = bench.open()
    document = create_document(page, "Reloaded", "")
    open_document(page, document)
    type_at_end(page, "one ")
    type_at_end(page, "two ")
    all_saved(page)
    page.reload()
    wait_ready(page)
    expect(page.locator("#editor")).to_have_value("one two ")
    page.wait_for_function("() => panes.workspace.doc?.canUndo === true")
    page.locator("#editor").focus()
    page.keyboard.press("Control+z")
    expect(page.locator("#editor")).to_have_value("one ")
    all_saved(page)
