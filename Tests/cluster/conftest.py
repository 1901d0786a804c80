"""Fixtures for the cluster tests: one private PostgreSQL for the module, a fresh database
and fresh nodes (behind haproxy) for each test. See panes_cluster.py.

A failing test's report ends with the evidence (`Evidence`): the log of every node it started
and the database server's log from its start, each also saved in a folder the report names
($PANES_CLUSTER_LOGS, or one in the temporary folder). A passing test shows and saves nothing."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from panes_cluster import BINARY, Cluster, Evidence, Postgres

# Lines of each log shown in the report; the saved file has all of them.
SHOWN_LINES = 400


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    Evidence.begin(list(Postgres.running))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not report.failed or not Evidence.logs:
        return
    folder = Path(os.environ.get("PANES_CLUSTER_LOGS") or tempfile.gettempdir()) / "panes-cluster-logs"
    folder = folder / (re.sub(r"[^\w.-]+", "_", item.nodeid)[-150:] + f"-{report.when}")
    shutil.rmtree(folder, ignore_errors=True)  # an earlier run's, of the same test
    folder.mkdir(parents=True, exist_ok=True)
    for title, text in Evidence.logs:
        try:
            content = text()
        except Exception as error:  # the evidence must not hide the failure
            content = f"(the log could not be read: {error!r})\n"
        path = folder / (re.sub(r"[^\w.-]+", "_", title) + ".log")
        path.write_text(content)
        lines = content.splitlines(keepends=True)
        shown = "".join(lines[-SHOWN_LINES:])
        if len(lines) > SHOWN_LINES:
            shown = f"(the last {SHOWN_LINES} of {len(lines)} lines)\n" + shown
        report.sections.append((f"{title} log, saved in {path}", shown))


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
