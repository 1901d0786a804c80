"""Traits that change after connect (issue 12 §3): a window resized across the compact/regular
boundary reports its new size class with `updateTraits`, once per crossing and not once per
resize; it lays itself out from the server's answer (traitCollectionDidChange); and the
user's other windows see the new traits in the switcher."""

import json

from conftest import Workbench, session_id, wait_ready
from playwright.sync_api import Page, expect

HEIGHT = 760


def traits_reports(frames: list) -> list:
    """The traits of every `updateTraits` request among the frames a page sent."""
    messages = [json.loads(frame) for frame in frames if isinstance(frame, str) and '"updateTraits"' in frame]
    return [message["traits"] for message in messages if message.get("type") == "updateTraits"]


def open_recording(bench: Workbench, frames: list) -> Page:
    """A window whose sent WebSocket frames land in `frames`."""
    page = bench.watch(bench.context().new_page())
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: frames.append(payload)))
    page.goto(bench.url())
    wait_ready(page)
    return page


def resize(page: Page, width: int) -> None:
    page.bring_to_front()
    page.set_viewport_size({"width": width, "height": HEIGHT})


def test_resizing_across_the_boundary_reports_traits_once_and_lays_the_window_out_again(bench: Workbench):
    frames: list = []
    window = open_recording(bench, frames)
    app = window.locator("#app")
    expect(app).to_have_attribute("data-layout", "regular")
    own = session_id(window)
    # Each layout change, with the traits the client had from the server at that moment: a
    # layout taken from the window alone would change before the server's answer came.
    window.evaluate(
        """() => {
          window.layoutChanges = [];
          new MutationObserver(() => window.layoutChanges.push([document.querySelector('#app').dataset.layout, panes.client.traits.width]))
            .observe(document.querySelector('#app'), { attributes: true, attributeFilter: ['data-layout'] });
        }"""
    )

    # Another window of the same user, showing the switcher: it sees the scene as the server does.
    other = bench.open()
    other.keyboard.press("Alt+W")
    card = other.locator(f'.session-card[data-session="{own}"]')
    expect(card).to_have_attribute("data-width", "regular")

    # Narrower, but still regular: nothing to report. Then across 700 px.
    resize(window, 1000)
    resize(window, 800)
    resize(window, 600)
    expect(app).to_have_attribute("data-layout", "compact")
    expect(window.locator("#detail")).to_be_hidden()  # a stacked navigation, at its list
    expect(card).to_have_attribute("data-width", "compact")
    assert window.evaluate("() => panes.client.traits") == {"width": "compact", "pointer": "fine"}
    assert traits_reports(frames) == [{"width": "compact", "pointer": "fine"}]

    # Within compact, then back to regular.
    resize(window, 500)
    resize(window, 1200)
    expect(app).to_have_attribute("data-layout", "regular")
    expect(window.locator("#detail")).to_be_visible()  # a split view again
    expect(card).to_have_attribute("data-width", "regular")
    assert traits_reports(frames) == [{"width": "compact", "pointer": "fine"}, {"width": "regular", "pointer": "fine"}]
    assert window.evaluate("() => window.layoutChanges") == [["compact", "compact"], ["regular", "regular"]]

