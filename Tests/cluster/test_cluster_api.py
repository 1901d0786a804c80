"""The HTTP API on a cluster: a write through the API on node A is heard by a window on node B
like any other change, and every change, whichever node made it, makes one webhook event,
delivered by one node."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pytest

from panes_cluster import Client, Cluster, ROOT

sys.path.insert(0, str(ROOT / "Tests" / "api"))
from api_support import API, SECRET, Receiver, make_key, write_keys  # noqa: E402


@pytest.fixture
def receiver():
    made = Receiver()
    yield made
    made.close()


def test_an_api_write_on_one_node_is_heard_by_a_window_on_another_and_each_change_makes_one_event(pg, workspace, receiver):
    folder = Path(tempfile.mkdtemp(prefix="panes-keys-"))
    secret, entry = make_key(folder, "crm", [workspace], "write")
    write_keys(folder / "keys.json", [entry])
    hooks = {"webhooks": [{"id": "crm", "url": receiver.url("/hooks"), "secret": SECRET}]}
    cluster = Cluster(pg, nodes=2, haproxy=False, node_args=["--api-keys", str(folder / "keys.json")],
                      settings={"webhookPollMs": 50, "webhookCoalesceMs": 0}, configuration=hooks)
    try:
        a, b = cluster.nodes
        api = API(a.port, secret, workspace)
        doc = api.ok("POST", "/documents", {"title": "Shared", "text": "one"}, status=201)["document"]["id"]
        window = Client(b.url, "bob", workspace)
        deadline = time.monotonic() + 10
        while True:  # node B reads the new record from the store as it hears of it
            reply = window.reply(window.send("openDocument", document=doc))
            if reply["ok"]:
                break
            assert reply["error"]["code"] == "document_not_found" and time.monotonic() < deadline
            time.sleep(0.1)
        assert reply["result"]["text"] == "one"

        api.ok("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": [3, " two"]})
        heard = window.event("documentOperation", lambda e: e["document"] == doc)
        assert heard["revision"] == 1 and heard["author"]["user"] == "api:crm"
        window.request("edit", document=doc, revision=1, operation=[7, " three"], opId="b:1")
        # Read back through node A, and through node B's API.
        deadline = time.monotonic() + 10
        while api.ok("GET", f"/documents/{doc}")["revision"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert api.ok("GET", f"/documents/{doc}")["text"] == "one two three"
        assert API(b.port, secret, workspace).ok("GET", f"/documents/{doc}")["text"] == "one two three"

        def documents(received):
            return [x for x in received if x["event"]["type"].startswith("document.")]
        got = receiver.wait(lambda r: len({x["id"] for x in documents(r)}) >= 3)
        time.sleep(1.0)
        got = documents(receiver.received())
        assert len(got) == len({x["id"] for x in got}) == 3, [x["event"]["type"] for x in got]
        assert [x["event"]["type"] for x in got] == ["document.created", "document.changed", "document.changed"]
        assert [x["event"]["data"]["actor"]["user"] for x in got[1:]] == ["api:crm", "bob"]
        # Bob's window made his session on node B: written once, by node B.
        sessions = [x for x in receiver.received() if x["event"]["type"] == "session.created"]
        assert len(sessions) == 1 and sessions[0]["event"]["data"]["user"] == "bob"
        window.close()
    finally:
        cluster.close()


def test_a_keys_rate_holds_for_the_cluster_as_a_whole(pg, workspace):
    """Each node admits its share of a key's budget (rate and burst over the live nodes the
    heartbeat counts): one key sending to both nodes at once gets the limit in total, not once
    per node, with no database round trip per request."""
    folder = Path(tempfile.mkdtemp(prefix="panes-keys-"))
    secret, entry = make_key(folder, "crm", [workspace], "read")
    write_keys(folder / "keys.json", [entry])
    burst = 10
    cluster = Cluster(pg, nodes=2, haproxy=False, node_args=["--api-keys", str(folder / "keys.json")],
                      settings={"apiRateLimitPerSecond": 1, "apiRateLimitBurst": burst})
    try:
        deadline = time.monotonic() + 10
        while not all(any("live nodes counted" in line and "nodes=2" in line for line in node.log) for node in cluster.nodes):
            assert time.monotonic() < deadline, "the nodes did not count each other"
            time.sleep(0.05)
        apis = [API(node.port, secret, workspace) for node in cluster.nodes]
        started = time.monotonic()
        statuses = [api.call("GET", "/documents").status for _ in range(burst) for api in apis]
        elapsed = time.monotonic() - started
        accepted = statuses.count(200)
        assert set(statuses) <= {200, 429}, statuses
        # The burst, plus what the rate gave back while the requests went (1 a second in all).
        assert burst // 2 <= accepted <= burst + int(elapsed) + 1, (accepted, elapsed, statuses)
        assert statuses.count(429) >= burst - int(elapsed) - 1
        # Each node admitted its own half of the burst, not the whole of it.
        for index in range(2):
            assert statuses[index::2].count(200) <= burst // 2 + int(elapsed) + 1, statuses
    finally:
        cluster.close()
