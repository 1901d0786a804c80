"""Fixtures for the HTTP API tests (see api_support.py): keys made by `panes apikey create`, a
server on SQLite with them, a webhook receiver, a workspace of the test's own."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from api_support import API, BINARY, SECRET, Receiver, Server, make_key, write_keys


@pytest.fixture(scope="session", autouse=True)
def binary() -> None:
    if not BINARY.exists():
        pytest.exit(f"no server binary at {BINARY}; build it or set PANES_BINARY", returncode=2)


@pytest.fixture
def workspace() -> str:
    return "w" + secrets.token_hex(4)


class Keys:
    """A keys file and the secrets of its keys: `writer` and `reader` for the test's workspace,
    `stranger` (write) for another workspace."""

    def __init__(self, workspace: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="panes-keys-"))
        self.path = self.dir / "keys.json"
        self.secrets: dict[str, str] = {}
        self.entries: dict[str, dict] = {}
        self.add("writer", [workspace], "write", name="CRM sync")
        self.add("reader", [workspace], "read")
        self.add("stranger", ["elsewhere"], "write")

    def add(self, key_id: str, workspaces: list[str], access: str, name: str | None = None) -> str:
        secret, entry = make_key(self.dir, key_id, workspaces, access, name)
        self.secrets[key_id] = secret
        self.entries[key_id] = entry
        self.save()
        return secret

    def remove(self, key_id: str) -> None:
        del self.entries[key_id]
        self.save()

    def save(self) -> None:
        write_keys(self.path, list(self.entries.values()))


@pytest.fixture
def keys(workspace: str) -> Keys:
    return Keys(workspace)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def config(receiver: Receiver | None, **settings) -> dict:
    base = {"webhookPollMs": 50, "webhookRetryFirstMs": 50, "webhookRetryMaxMs": 400, "webhookTimeoutMs": 2_000,
            "webhookCoalesceMs": 0}
    base.update(settings)
    out: dict = {"settings": base}
    if receiver:
        out["webhooks"] = [{"id": "crm", "url": receiver.url("/hooks"), "secret": SECRET}]
    return out


@pytest.fixture
def server(keys: Keys, receiver: Receiver) -> Iterator[Server]:
    made = Server(keys.path, config(receiver))
    yield made
    made.stop()


@pytest.fixture
def api(server: Server, keys: Keys, workspace: str) -> API:
    return API(server.port, keys.secrets["writer"], workspace)
