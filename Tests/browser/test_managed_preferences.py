"""Managed preferences in the settings: a key the operator locks (the configuration file's
`managedPreferences`) shows the operator's value, disabled and labelled as managed by the
administrator, and the window never tries to write it (the server would refuse with
`preference_locked`); settings that are not locked still work."""

import json
from pathlib import Path

from conftest import Server, Workbench, wait_ready
from playwright.sync_api import Page, expect

MANAGED = "Managed by your administrator"
LOCKED = {
    "managedPreferences": {
        "user": {
            "appearance.theme": {"value": "dark", "locked": True},
            "editor.fontSize": {"value": 18, "locked": True},
        }
    }
}


def preference_writes(frames: list) -> list:
    """The key paths of every `setPreference`/`removePreference` among the frames a page sent."""
    messages = [json.loads(frame) for frame in frames if isinstance(frame, str) and "Preference" in frame]
    return [m["keyPath"] for m in messages if m.get("type") in ("setPreference", "removePreference")]


def open_recording(bench: Workbench, frames: list) -> Page:
    """A window whose sent WebSocket frames (on every connection) land in `frames`."""
    page = bench.watch(bench.context().new_page())
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: frames.append(payload)))
    page.goto(bench.url())
    wait_ready(page)
    return page


def expect_locked_settings(page: Page) -> None:
    """The settings popover shows the operator's values, disabled and labelled."""
    page.bring_to_front()
    page.locator("#open-settings").click()
    settings = page.locator("#settings")
    expect(settings).to_be_visible()
    theme, font = settings.locator('[data-preference="theme"]'), settings.locator('[data-preference="fontSize"]')
    for row in (theme, font):
        expect(row.get_by_text(MANAGED)).to_be_visible()
    for name in ("Light", "Dark", "System"):
        expect(theme.get_by_role("button", name=name)).to_be_disabled()
    expect(theme.get_by_role("button", name="Dark")).to_have_attribute("aria-pressed", "true")
    expect(font.get_by_role("button", name="Smaller text")).to_be_disabled()
    expect(font.get_by_role("button", name="Larger text")).to_be_disabled()
    expect(font.locator("output")).to_have_text("18 px")
    # The word-count bar is not managed: enabled, and not labelled.
    word_count = settings.locator('[data-preference="showWordCount"]')
    expect(word_count.get_by_role("switch")).to_be_enabled()
    expect(word_count.get_by_text(MANAGED)).to_be_hidden()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.wait_for_function("() => getComputedStyle(document.querySelector('#editor')).fontSize === '18px'")


def test_a_locked_setting_shows_the_operators_value_disabled_and_is_never_written(browser, tmp_path: Path):
    server = Server(tmp_path / "data").start()
    bench = Workbench(browser, server, "managed")
    try:
        frames: list = []
        page = open_recording(bench, frames)
        # The user chose a light theme before the operator locked it to dark, and the very text
        # size the operator then locked: only its lock is news to the window.
        page.evaluate("() => panes.client.setPreference('appearance.theme', 'light')")
        page.evaluate("() => panes.client.setPreference('editor.fontSize', 18)")
        expect(page.locator("html")).to_have_attribute("data-theme", "light")

        config = tmp_path / "panes.json"
        config.write_text(json.dumps(LOCKED))
        server.stop()
        server.args = ["--config", str(config)]
        server.start()

        # The open window reconnects and hears of the lock (its observations catch up)…
        expect(page.locator("html")).to_have_attribute("data-theme", "dark", timeout=20_000)
        expect_locked_settings(page)

        # …and never writes a locked key, while an unlocked one is written as before.
        writes = len(preference_writes(frames))
        settings = page.locator("#settings")
        settings.get_by_role("button", name="Light").click(force=True)  # disabled: nothing happens
        settings.get_by_role("button", name="Larger text").click(force=True)
        settings.get_by_text("Word count bar").click()
        expect(settings.get_by_role("switch")).to_be_checked()
        page.evaluate("() => panes.client.ping()")  # the frames sent before it have been seen
        assert preference_writes(frames)[writes:] == ["editor.showWordCount"]
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        page.keyboard.press("Escape")

        # A window opened now starts with the lock (its observations' initial values).
        expect_locked_settings(bench.open())
        assert not bench.errors, bench.errors
    finally:
        bench.close()
        server.stop()
