"""Presence that counts every node (issue 26 §6): a document's summary counts a person's windows
on every node, and how many of them are in use, on both nodes' lists; a node that dies takes its
windows out of the count once its lease ends. Over real sockets, two nodes on one PostgreSQL."""

from __future__ import annotations

import time

from panes_cluster import Client, Cluster

WORKSPACE = "people"


def people_in(client: Client, document: str, want: list[dict], timeout: float = 10) -> dict:
    """Waits until a `documentsChanged` summary of the document lists `want` as its people."""
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        try:
            event = client.event("documentsChanged", where=lambda e: e["document"]["id"] == document,
                                 timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        seen = event["document"]
        if seen.get("people") == want:
            return seen
    raise AssertionError(f"people never became {want}; last summary {seen}")


def test_a_persons_windows_on_both_nodes_count_together_and_a_dead_nodes_go(pg):
    cluster = Cluster(pg, nodes=2)
    try:
        a, b = cluster.nodes
        alice_a = Client(a.url, "alice", WORKSPACE)
        document = alice_a.request("createDocument", title="Plan", text="x")["document"]["id"]
        alice_a.request("lifecycle", visible=True, focused=True)
        watcher_a = Client(a.url, "carol", WORKSPACE)
        watcher_b = Client(b.url, "dave", WORKSPACE)
        watcher_a.request("observeDocuments")
        watcher_b.request("observeDocuments")

        alice_a.request("openDocument", document=document)
        alice_b1 = Client(b.url, "alice", WORKSPACE)
        alice_b2 = Client(b.url, "alice", WORKSPACE)
        alice_b1.request("openDocument", document=document)
        alice_b2.request("openDocument", document=document)
        bob_b = Client(b.url, "bob", WORKSPACE)
        bob_b.request("openDocument", document=document)

        want = [{"user": "alice", "name": "alice", "windows": 3, "active": 1},
                {"user": "bob", "name": "bob", "windows": 1, "active": 0}]
        on_a = people_in(watcher_a, document, want)
        on_b = people_in(watcher_b, document, want)
        assert on_a["participantCount"] == 4 and on_b["participantCount"] == 4
        listed = watcher_a.request("observeDocuments")["documents"][0]
        assert listed["people"] == want and listed["participantCount"] == 4

        # Alice's window on a goes to the background: b's list hears it.
        alice_a.request("lifecycle", visible=False, focused=False)
        people_in(watcher_b, document, [{**want[0], "active": 0}, want[1]])

        # Node b dies: once its lease ends, a counts only its own windows.
        b.kill()
        people_in(watcher_a, document, [{"user": "alice", "name": "alice", "windows": 1, "active": 0}], timeout=20)
    finally:
        cluster.close()
