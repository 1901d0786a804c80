"""Rights per document in the workspace (issue 26 §3): a viewer's window is read-only and says
so, a downgrade makes an open window read-only at once, and a revoked link closes the document
in the window that opened it through the link. Against a server with `--auth tokens`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from conftest import Server, Workbench, wait_ready
from playwright.sync_api import Browser, Page, expect

TOKENS = {
    "tokens": [
        {"token": "t-ed", "user": "ed", "name": "Ed", "workspaces": {"rights": "editor"}},
        {"token": "t-eve", "user": "eve", "name": "Eve", "workspaces": {"rights": "editor"}},
        {"token": "t-vic", "user": "vic", "name": "Vic", "workspaces": {"rights": "viewer"}},
    ]
}


@pytest.fixture(scope="module")
def tokens_server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="panes-browser-rights-") as data:
        tokens = Path(data) / "tokens.json"
        tokens.write_text(json.dumps(TOKENS))
        tokens.chmod(0o600)
        running = Server(Path(data) / "data", args=["--auth", "tokens", "--tokens", str(tokens)])
        running.data.mkdir()
        running.start()
        yield running
        running.stop()


@pytest.fixture
def rights(browser: Browser, tokens_server: Server) -> Iterator[Workbench]:
    bench = Workbench(browser, tokens_server, "rights")
    yield bench
    bench.close()
    assert not bench.errors, "uncaught errors in the page:\n" + "\n".join(bench.errors)


def window(bench: Workbench, token: str, **params: str) -> Page:
    page = bench.watch(bench.context(token).new_page())
    page.goto(bench.url(token=token, **params))
    wait_ready(page)
    return page


def create(page: Page, title: str, text: str) -> str:
    return page.evaluate(
        "async ([title, text]) => (await panes.client.createDocument(title, {text})).id", [title, text]
    )


def shown(page: Page, document: str, text: str) -> None:
    expect(page.locator("#app")).to_have_attribute("data-document", document)
    expect(page.locator("#editor")).to_have_value(text)


def link_for_eve(ed: Page, document: str, role: str) -> str:
    """Takes the document away from Eve and makes a link to it (with `role`); returns its token."""
    return ed.evaluate(
        """async ([d, role]) => {
            await panes.client.shareDocument(d, 'eve', 'none');
            return (await panes.client.createDocumentLink(d, role, {expiresInMs: 600000})).token;
        }""",
        [document, role],
    )


def revoke_first_link(ed: Page, document: str) -> None:
    ed.evaluate(
        """async ([d]) => {
            const shares = await panes.client.listDocumentShares(d);
            await panes.client.revokeDocumentLink(d, shares.links[0].id);
        }""",
        [document],
    )


def test_a_viewers_window_is_read_only_and_says_so(rights: Workbench):
    ed = window(rights, "t-ed")
    document = create(ed, "Minutes", "agreed")
    vic = window(rights, "t-vic", open=document)
    shown(vic, document, "agreed")
    expect(vic.locator("#read-only")).to_be_visible()
    expect(vic.locator("#read-only")).to_have_text("Read only")
    expect(vic.locator("#editor")).to_have_attribute("readonly", "")
    vic.locator("#editor").click()
    vic.keyboard.type("changed")
    expect(vic.locator("#editor")).to_have_value("agreed")
    # The author's own window is not read-only.
    ed.bring_to_front()
    ed.locator(f'.document-row[data-document-id="{document}"]').click()
    shown(ed, document, "agreed")
    expect(ed.locator("#read-only")).to_be_hidden()
    expect(ed.locator("#editor")).not_to_have_attribute("readonly", "")


def test_a_downgrade_makes_an_open_window_read_only_at_once(rights: Workbench):
    ed = window(rights, "t-ed")
    document = create(ed, "Plan", "draft")
    eve = window(rights, "t-eve", open=document)
    shown(eve, document, "draft")
    expect(eve.locator("#read-only")).to_be_hidden()
    eve.locator("#editor").click()
    eve.keyboard.press("End")
    eve.keyboard.type("!")
    expect(eve.locator("#editor")).to_have_value("draft!")
    eve.evaluate("() => panes.workspace.doc.whenSaved()")

    ed.bring_to_front()
    ed.evaluate("([d]) => panes.client.shareDocument(d, 'eve', 'viewer')", [document])
    eve.bring_to_front()
    expect(eve.locator("#read-only")).to_be_visible()
    expect(eve.locator("#editor")).to_have_attribute("readonly", "")
    expect(eve.get_by_test_id("toast")).to_contain_text(["“Plan” is read-only for you now."])
    eve.locator("#editor").click()
    eve.keyboard.type("?")
    expect(eve.locator("#editor")).to_have_value("draft!")
    assert ed.evaluate("async ([d]) => (await panes.client.request('openDocument', {document: d})).text", [document]) == "draft!"


def test_a_revoked_link_closes_the_document_in_the_window_that_used_it(rights: Workbench):
    ed = window(rights, "t-ed")
    document = create(ed, "Shared by link", "hello")
    token = link_for_eve(ed, document, "viewer")
    # Without the link Eve cannot see it at all.
    eve = window(rights, "t-eve")
    expect(eve.locator(f'.document-row[data-document-id="{document}"]')).to_have_count(0)
    eve.close()

    eve = window(rights, "t-eve", open=document, link=token)
    shown(eve, document, "hello")
    expect(eve.locator("#read-only")).to_be_visible()
    ed.bring_to_front()
    revoke_first_link(ed, document)
    eve.bring_to_front()
    expect(eve.locator("#app")).not_to_have_attribute("data-document", document)
    expect(eve.get_by_test_id("toast")).to_contain_text(["You no longer have access to “Shared by link”."])
    # Opening through the revoked link again is refused.
    again = window(rights, "t-eve", open=document, link=token)
    expect(again.locator("#app")).not_to_have_attribute("data-document", document)
    expect(again.get_by_test_id("toast")).to_contain_text(["revoked"])


def test_a_window_opened_through_a_link_reopens_it_after_a_reload_and_a_duplicate(rights: Workbench):
    ed = window(rights, "t-ed")
    document = create(ed, "Kept by link", "hello")
    token = link_for_eve(ed, document, "editor")
    eve = window(rights, "t-eve", open=document, link=token)
    shown(eve, document, "hello")
    # The token left the address bar; it is kept with the tab, not in the session the server stores.
    assert "link=" not in eve.url
    assert token not in json.dumps(eve.evaluate("panes.client.session"))
    # A reload brings the window back on the document, through the link, still editable.
    eve.reload()
    wait_ready(eve)
    shown(eve, document, "hello")
    expect(eve.locator("#read-only")).to_be_hidden()
    # A copy of the tab (window.open copies sessionStorage, as a duplicated tab does) forks the
    # window, and opens the document through the link too.
    with eve.context.expect_page() as opened:
        eve.evaluate("() => { window.open(location.href); }")
    duplicate = rights.watch(opened.value)
    wait_ready(duplicate)
    shown(duplicate, document, "hello")
    duplicate.close()

    # Revoked while the tab is away (on another page of the site): back, the window says so
    # clearly and opens nothing.
    app = eve.url
    eve.goto(f"{rights.server.url}/metrics")
    ed.bring_to_front()
    revoke_first_link(ed, document)
    eve.bring_to_front()
    eve.goto(app)
    wait_ready(eve)
    expect(eve.get_by_test_id("toast")).to_contain_text(["revoked"])
    expect(eve.locator("#app")).not_to_have_attribute("data-document", document)
