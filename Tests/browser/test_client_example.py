"""The client library on its own (web/examples/notepad.html): a contenteditable bound to a
shared document, with remote carets, outside the workspace UI."""

from conftest import Workbench
from playwright.sync_api import expect


def test_the_library_binds_a_contenteditable_shared_by_two_people(bench: Workbench, needs):
    needs("documents")
    pages = []
    for person in ("Ann", "Ben"):
        page = bench.watch(bench.context(person).new_page())
        page.goto(f"{bench.server.url}/examples/notepad.html?name={person}&workspace={bench.workspace}")
        expect(page.locator("#status")).to_have_text(f"editing as {person}")
        pages.append(page)
    ann, ben = pages

    ann.bring_to_front()
    ann.locator("#text").click()
    ann.keyboard.type("Hello 😀")
    expect(ben.locator("#text")).to_have_text("Hello 😀")
    ben.bring_to_front()
    ben.locator("#text").click()
    ben.keyboard.press("End")
    ben.keyboard.type(" and hi")
    expect(ann.locator("#text")).to_have_text("Hello 😀 and hi")
    expect(ann.locator(".pn-remote-label")).to_have_text("Ben")
    ann.wait_for_function("() => notepad.session.synchronized && notepad.session.text === 'Hello 😀 and hi'")
