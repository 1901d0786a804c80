"""Global preferences: a setting changed in one tab shows in every tab at once (issue 6)."""

from conftest import Workbench, create_document, open_document, wait_ready
from playwright.sync_api import expect


def font_size(page) -> str:
    return page.evaluate("() => getComputedStyle(document.querySelector('#editor')).fontSize")


def test_a_setting_toggled_in_tab_a_shows_in_tabs_b_and_c(bench: Workbench, needs):
    needs("preferences", "documents")
    a, b, c = bench.open(), bench.open(), bench.open()
    document = create_document(a, "Counting", "one two three four")
    for page in (a, b, c):
        page.bring_to_front()
        open_document(page, document)
    for page in (a, b, c):
        expect(page.locator("html")).to_have_attribute("data-theme", "system")
        expect(page.locator("#word-count")).to_be_hidden()

    a.bring_to_front()
    a.locator("#open-settings").click()
    settings = a.locator("#settings")
    expect(settings).to_be_visible()
    settings.get_by_text("Word count bar").click()
    settings.get_by_role("button", name="Dark").click()
    settings.get_by_role("button", name="Larger text").click()
    settings.get_by_role("button", name="Larger text").click()

    for page in (a, b, c):
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        page.wait_for_function("() => getComputedStyle(document.querySelector('#editor')).fontSize === '17px'")
        expect(page.locator("#word-count")).to_be_visible()
        expect(page.locator("#word-count")).to_contain_text("4 words")

    # A window opened later starts with the current values (observed with `initial`).
    d = bench.open()
    expect(d.locator("html")).to_have_attribute("data-theme", "dark")
    assert font_size(d) == "17px"

    # And a change from B reaches A.
    b.bring_to_front()
    b.keyboard.press("Alt+Comma")
    b.locator("#settings").get_by_role("button", name="Light").click()
    for page in (a, c, d):
        expect(page.locator("html")).to_have_attribute("data-theme", "light")
    wait_ready(d)


def test_the_settings_button_answers_every_click(bench: Workbench):
    page = bench.open()
    gear, settings = page.locator("#open-settings"), page.locator("#settings")
    gear.click()
    expect(settings).to_be_visible()
    gear.click()  # a click on the gear while open closes it…
    expect(settings).to_be_hidden()
    gear.click()  # …and the next one, right after, opens it again
    expect(settings).to_be_visible()
    page.keyboard.press("Escape")
    expect(settings).to_be_hidden()
    gear.click()
    expect(settings).to_be_visible()


def test_the_font_size_is_applied_in_the_unit_it_is_labelled_in(bench: Workbench, needs):
    needs("preferences")
    page = bench.open()
    page.locator("#open-settings").click()
    label = page.locator("#pref-font-size")
    for _ in range(2):
        text = label.inner_text()
        value, unit = text.split()
        pixels = float(value) * {"px": 1, "pt": 4 / 3}[unit]
        assert font_size(page) == f"{pixels:g}px", f"labelled {text}, applied {font_size(page)}"
        page.get_by_role("button", name="Larger text").click()
        expect(label).not_to_have_text(text)
