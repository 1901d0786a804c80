"""The toolbar: every button has a name, a tooltip and its own icon, and at compact width
the document's title stays readable (issue 12)."""

from conftest import Workbench, create_document, open_document
from playwright.sync_api import expect

PHONE = {"width": 390, "height": 844}
LONG_TITLE = "Quarterly planning notes for the design team"


def test_every_toolbar_button_has_a_name_a_tooltip_and_its_own_icon(bench: Workbench, needs):
    needs("documents")
    page = bench.open()
    open_document(page, create_document(page, "Plan", "text"))
    buttons = page.locator(".toolbar button:visible, #new-document")
    expect(buttons).to_have_count(7)  # with Version History (issue 25)
    tooltip = page.get_by_role("tooltip")
    icons = set()
    for index in range(buttons.count()):
        button = buttons.nth(index)
        name = button.get_attribute("aria-label")
        assert name, f"{button.get_attribute('id')} has no accessible name"
        button.hover()
        expect(tooltip).to_be_visible()
        expect(tooltip).to_contain_text(name)
        icons.add(button.locator("svg").inner_html())
    assert len(icons) == buttons.count(), "two toolbar buttons share an icon"


def test_compact_toolbar_keeps_the_whole_title_readable(bench: Workbench, needs):
    needs("documents")
    page = bench.open("Phone", viewport=PHONE)
    open_document(page, create_document(page, LONG_TITLE, "text"))
    title = page.locator("#document-title")
    expect(title).to_have_value(LONG_TITLE)
    clipped = title.evaluate("e => [e.scrollWidth - e.clientWidth, e.scrollHeight - e.clientHeight]")
    assert clipped == [0, 0], f"the title is clipped by {clipped} px (width, height)"
    box = title.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
