"""Making windows: drag and drop between tabs and onto the new-window zone (issue 4),
"Open in New Window" bringing the showing tab forward, and the switcher closing a tab
(issue 6).

Real drags between tabs go through the operating system and cannot be scripted, so drags are
synthesized: `dragstart` on a sidebar row with a `DataTransfer`, then `dragenter`/`dragover`/
`drop` with the drag's identifier in the other tab. The page's handlers are the same ones a
real drag runs, and the server side is the same protocol.
"""

import re

from conftest import Workbench, create_document, open_document, saved, session_id, wait_ready
from playwright.sync_api import Page, expect

DRAG_TYPE = "application/x-panes-drag"


def start_drag(page: Page, document_id: str) -> str:
    """Starts dragging a sidebar row; returns the drag identifier the page put in the drag data."""
    page.bring_to_front()
    page.evaluate(
        """(id) => {
            const row = document.querySelector(`.document-row[data-document-id="${id}"]`);
            window.__drag = new DataTransfer();
            row.dispatchEvent(new DragEvent('dragstart', { bubbles: true, cancelable: true, dataTransfer: window.__drag }));
        }""",
        document_id,
    )
    page.wait_for_function(f"() => window.__drag.getData('{DRAG_TYPE}') !== ''")
    return page.evaluate(f"() => window.__drag.getData('{DRAG_TYPE}')")


def drag_over(page: Page, drag_id: str) -> None:
    """A drag carrying `drag_id` enters the page."""
    page.bring_to_front()
    page.evaluate(
        """(id) => {
            window.__incoming = new DataTransfer();
            window.__incoming.setData('application/x-panes-drag', id);
            const app = document.querySelector('#app');
            app.dispatchEvent(new DragEvent('dragenter', { bubbles: true, cancelable: true, dataTransfer: window.__incoming }));
        }""",
        drag_id,
    )


def drop(page: Page, selector: str) -> None:
    """The drag that entered the page is dropped on `selector`."""
    page.evaluate(
        """(selector) => {
            const target = document.querySelector(selector);
            for (const type of ['dragover', 'drop']) {
                target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: window.__incoming }));
            }
        }""",
        selector,
    )


def test_drag_to_another_tab_and_onto_the_new_window_zone(bench: Workbench, needs):
    """Issue 4: drag an item from tab A onto tab B, and another onto A's new-window zone,
    which opens a third tab showing that item."""
    needs("windows", "documents")
    a, b = bench.open(), bench.open()
    event = create_document(a, "Team offsite", "Thursday 10:00, room 4")
    other = create_document(a, "Budget", "Q3 numbers")

    drag = start_drag(a, event)
    expect(a.locator("#new-window-zone")).to_be_visible()  # it appears while dragging
    drag_over(b, drag)
    expect(b.locator("#new-window-zone")).to_be_visible()
    drop(b, "#editor-area")
    expect(b.locator("#app")).to_have_attribute("data-document", event)
    expect(b.locator("#editor")).to_have_value("Thursday 10:00, room 4")
    expect(a.locator("#new-window-zone")).to_be_hidden()  # the source heard `dragEnded`
    expect(a.locator("#app")).not_to_have_attribute("data-document", event)

    drag = start_drag(a, other)
    drag_over(a, drag)
    with a.context.expect_page() as opened:
        drop(a, "#new-window-zone")
    c = bench.watch(opened.value)
    wait_ready(c)
    expect(c.locator("#app")).to_have_attribute("data-document", other)
    expect(c.locator("#editor")).to_have_value("Q3 numbers")
    assert "ticket=" not in c.url  # removed once used: a reload resumes by sessionStorage
    assert len({session_id(a), session_id(b), session_id(c)}) == 3

    c.reload()
    wait_ready(c)
    expect(c.locator("#app")).to_have_attribute("data-document", other)


def test_open_in_new_window_brings_the_tab_showing_it_forward(bench: Workbench, needs):
    needs("windows", "documents")
    a, b = bench.open(), bench.open()
    shown = create_document(a, "Already open", "in tab B")
    fresh = create_document(a, "Not open anywhere", "nobody shows this")
    b.bring_to_front()
    open_document(b, shown)

    a.bring_to_front()
    pages = len(a.context.pages)
    a.locator(f'.document-row[data-document-id="{shown}"]').click(button="right")
    a.get_by_role("menuitem", name=re.compile("Open in New Window")).click()
    expect(b.locator("#app")).to_have_attribute("data-activated", re.compile(r"\d+"))
    expect(a.get_by_test_id("toast")).to_contain_text("brought forward")
    assert len(a.context.pages) == pages  # no new tab

    # A document no window shows gets a new tab.
    with a.context.expect_page() as opened:
        a.locator(f'.document-row[data-document-id="{fresh}"]').click(button="right")
        a.get_by_role("menuitem", name=re.compile("Open in New Window")).click()
    c = bench.watch(opened.value)
    wait_ready(c)
    expect(c.locator("#app")).to_have_attribute("data-document", fresh)

    # Asking again brings that new tab forward instead of opening another.
    a.bring_to_front()
    a.locator(f'.document-row[data-document-id="{fresh}"]').click(button="right")
    a.get_by_role("menuitem", name=re.compile("Open in New Window")).click()
    expect(c.locator("#app")).to_have_attribute("data-activated", re.compile(r"\d+"))
    assert len(a.context.pages) == pages + 1


def test_closing_a_window_in_the_switcher_closes_its_tab(bench: Workbench, needs):
    needs("windows")
    a = bench.open()
    with a.context.expect_page() as opened:
        a.keyboard.press("Alt+Shift+N")  # New Window
    child = bench.watch(opened.value)
    wait_ready(child)
    child.locator("#window-note").fill("soon gone")
    child_session = session_id(child)

    a.bring_to_front()
    a.locator("#open-switcher").click()
    switcher = a.locator("#switcher")
    card = switcher.locator(f'.session-card[data-session="{child_session}"]')
    expect(card).to_be_visible()
    expect(switcher.locator(f'.session-card[data-session="{session_id(a)}"]')).to_contain_text("This window")
    expect(card.locator(".session-state")).not_to_have_text("Closed")

    with child.expect_event("close"):
        card.get_by_role("button", name=re.compile("^Close")).click()
    expect(card).to_have_count(0)

    # A tab the browser will not let a script close shows that it was closed instead.
    b = bench.open()
    b_session = session_id(b)
    a.bring_to_front()
    b_card = switcher.locator(f'.session-card[data-session="{b_session}"]')
    expect(b_card).to_be_visible()
    b_card.get_by_role("button", name=re.compile("^Close")).click()
    expect(b_card).to_have_count(0)
    b.wait_for_function("() => panes.client.status === 'destroyed'")
    if not b.is_closed():
        expect(b.locator("#closed-screen")).to_be_visible()
        expect(b.locator("#closed-screen")).to_contain_text("This window was closed")


def test_a_new_window_from_the_switcher_plus(bench: Workbench, needs):
    needs("windows")
    a = bench.open()
    a.keyboard.press("Alt+W")
    expect(a.locator("#switcher")).to_be_visible()
    with a.context.expect_page() as opened:
        a.locator("#switcher").get_by_role("button", name="New Window", exact=True).click()
    child = bench.watch(opened.value)
    wait_ready(child)
    assert session_id(child) != session_id(a)
    expect(a.locator("#switcher .session-card")).to_have_count(2)


def test_reopening_a_closed_window_from_the_switcher_restores_it_whole(bench: Workbench, needs):
    """A window closed and reopened from the switcher comes back on its document, with its note:
    the server hands back the window's own restoration activity, not a bare one."""
    needs("windows", "documents")
    a = bench.open()
    document = create_document(a, "Reopened", "some text")
    with a.context.expect_page() as opened:
        a.keyboard.press("Alt+Shift+N")  # New Window
    child = bench.watch(opened.value)
    wait_ready(child)
    open_document(child, document)
    child.locator("#window-note").fill("note kept across a close")
    saved(child)
    child_session = session_id(child)
    child.close()

    a.bring_to_front()
    a.locator("#open-switcher").click()
    card = a.locator(f'#switcher .session-card[data-session="{child_session}"]')
    expect(card.locator(".session-state")).to_have_text("Closed")
    with a.context.expect_page() as reopened:
        card.locator(".session-open").click()
    again = bench.watch(reopened.value)
    wait_ready(again)
    assert session_id(again) == child_session
    expect(again.locator("#app")).to_have_attribute("data-document", document)
    expect(again.locator("#window-note")).to_have_value("note kept across a close")
