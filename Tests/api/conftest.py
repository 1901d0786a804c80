"""Fixtures for the HTTP API tests (see api_support.py): keys made by `panes apikey create`, a
server on SQLite with them, a webhook receiver, a workspace of the test's own."""

from __future__ import annotations

import secrets
from typing import Iterator

import pytest

from api_support import API, BINARY, Keys, Receiver, Server, config


@pytest.fixture(scope="session", autouse=True)
def binary() -> None:
    if not BINARY.exists():
        pytest.exit(f"no server binary at {BINARY}; build it or set PANES_BINARY", returncode=2)


@pytest.fixture
def workspace() -> str:
    return "w" + secrets.token_hex(4)


@pytest.fixture
def keys(workspace: str) -> Keys:
    return Keys(workspace)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


@pytest.fixture
def server(keys: Keys, receiver: Receiver) -> Iterator[Server]:
    made = Server(keys.path, config(receiver))
    yield made
    made.stop()


@pytest.fixture
def servers(keys: Keys) -> Iterator:
    """Starts servers with other settings (`servers(receiver_or_None, **settings)`); stops them after."""
    made: list[Server] = []

    def start(receiver: Receiver | None, **settings) -> Server:
        made.append(Server(keys.path, config(receiver, **settings)))
        return made[-1]
    yield start
    for server in made:
        server.stop()


@pytest.fixture
def api(server: Server, keys: Keys, workspace: str) -> API:
    return API(server.port, keys.secrets["writer"], workspace)
