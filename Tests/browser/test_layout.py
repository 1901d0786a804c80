"""Layouts and keyboard: a split view at regular width, a stacked navigation at compact width,
the sidebar kept per window, and a shortcut for every action, listed in the help overlay."""

import re

from conftest import Workbench, create_document, open_document, wait_ready
from playwright.sync_api import Page, expect

PHONE = {"width": 390, "height": 844}


def box(page: Page, selector: str) -> dict:
    return page.locator(selector).bounding_box()


def test_regular_width_is_a_split_view(bench: Workbench, needs):
    page = bench.open()
    expect(page.locator("#app")).to_have_attribute("data-layout", "regular")
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#detail")).to_be_visible()
    sidebar, detail = box(page, "#sidebar"), box(page, "#detail")
    assert sidebar["x"] + sidebar["width"] <= detail["x"] + 1  # side by side
    assert abs(sidebar["y"] - detail["y"]) < 2
    expect(page.locator("#back")).to_be_hidden()

    page.locator("#toggle-sidebar").click()
    expect(page.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    expect(page.locator("#sidebar")).to_be_hidden()
    page.wait_for_function("() => document.querySelector('#detail').getBoundingClientRect().x === 0")


def test_compact_width_is_a_stacked_navigation_with_a_back_button(bench: Workbench, needs):
    needs("documents")
    page = bench.open("Phone", viewport=PHONE)
    expect(page.locator("#app")).to_have_attribute("data-layout", "compact")
    document = create_document(page, "Groceries", "milk, eggs")
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#detail")).to_be_hidden()

    open_document(page, document)
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#back")).to_be_visible()
    assert box(page, "#detail")["width"] == PHONE["width"]

    page.locator("#open-settings").click()
    expect(page.locator("#settings")).to_have_class(re.compile(r"\bsheet\b"))
    settings = box(page, "#settings")
    assert settings["width"] == PHONE["width"] and settings["y"] + settings["height"] >= PHONE["height"] - 1
    page.keyboard.press("Escape")
    expect(page.locator("#settings")).to_be_hidden()

    page.locator("#back").click()
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#detail")).to_be_hidden()

    # The stacked view is restored too.
    open_document(page, document)
    page.evaluate("() => panes.workspace.saver.whenSaved()")
    page.reload()
    wait_ready(page)
    expect(page.locator("#detail")).to_be_visible()
    expect(page.locator("#editor")).to_have_value("milk, eggs")


def test_every_action_has_a_shortcut_listed_in_the_help_overlay(bench: Workbench, needs):
    needs("documents")
    page = bench.open()
    page.keyboard.press("Alt+Slash")
    help_overlay = page.locator("#help")
    expect(help_overlay).to_be_visible()
    for command, keys in [
        ("New Window", "Alt+Shift+N"),
        ("Close Window", "Alt+Shift+W"),
        ("New Document", "Alt+N"),
        ("Show or Hide Sidebar", "Alt+S"),
        ("Settings…", "Alt+,"),
        ("Show All Windows", "Alt+W"),
        ("Open Document in New Window", "Alt+Shift+O"),
        ("Keyboard Shortcuts", "Alt+/"),
    ]:
        term = help_overlay.locator("dt", has_text=re.compile(f"^{re.escape(command)}$"))
        expect(term).to_have_count(1)
        expect(term.locator("xpath=following-sibling::dd[1]")).to_have_text(keys)
    page.keyboard.press("Escape")
    expect(help_overlay).to_be_hidden()

    page.keyboard.press("Alt+S")
    expect(page.locator("#app")).to_have_attribute("data-sidebar", "hidden")
    page.keyboard.press("Alt+S")
    expect(page.locator("#app")).to_have_attribute("data-sidebar", "shown")
    page.keyboard.press("Alt+Comma")
    expect(page.locator("#settings")).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+W")
    expect(page.locator("#switcher")).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+N")
    expect(page.locator("#app")).to_have_attribute("data-document", re.compile("."))
    expect(page.locator("#document-title")).to_be_focused()
    page.keyboard.type("Written with the keyboard")
    page.keyboard.press("Enter")
    expect(page.locator(".document-row", has_text="Written with the keyboard")).to_be_visible()
    expect(page.locator("#editor")).to_be_focused()
    # Buttons say their shortcut.
    expect(page.locator("#toggle-sidebar")).to_have_attribute("data-tooltip", "Toggle Sidebar (Alt+S)")
