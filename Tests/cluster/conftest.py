"""Fixtures for the cluster tests: one private PostgreSQL for the module, a fresh database
and fresh nodes (behind haproxy) for each test. See panes_cluster.py."""

from __future__ import annotations

import secrets
from typing import Iterator

import pytest

from panes_cluster import BINARY, Cluster, Postgres


@pytest.fixture(scope="session")
def pg() -> Iterator[Postgres]:
    if not BINARY.exists():
        pytest.exit(f"no server binary at {BINARY}; build it or set PANES_BINARY", returncode=2)
    server = Postgres()
    yield server
    server.close()


@pytest.fixture
def cluster(pg: Postgres) -> Iterator[Cluster]:
    made = Cluster(pg, nodes=2)
    yield made
    made.close()


@pytest.fixture
def workspace() -> str:
    """Each test in a workspace of its own."""
    return "w" + secrets.token_hex(4)
