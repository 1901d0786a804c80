"""Issue 27: a drop across nodes ends for its source whatever node dies. A drop onto a window
on another node is stored as the drag's ending first and settled (delivered, or given back)
second; when the node that took it and the window's node both die between the two, the node
the drag began on settles it, `nodeLeaseMs` + `dropRecoveryMs` after the drag's expiry, as returned: the source
hears `dragEnded` with `outcome: "returned"` and keeps the items.

Three nodes on a real PostgreSQL: c holds the source, a the dropping window, b the window
dropped onto. b is frozen (SIGSTOP) before the drop, so the offer waits unread; a is killed
(SIGKILL) once the drop's ending is in the database and well before its own take-back
(`dropConfirmTimeoutMs`); then b is killed too."""

from __future__ import annotations

import signal
import time

from panes_cluster import Client, Cluster

LEASE_MS = 3_000
DRAG_LIFETIME_MS = 6_000
RECOVERY_MS = 1_000


def test_a_drop_whose_dropping_and_receiving_nodes_both_died_is_returned_to_its_source(pg, workspace):
    cluster = Cluster(pg, nodes=3, haproxy=False, lease_ms=LEASE_MS,
                      settings={"dragLifetimeMs": DRAG_LIFETIME_MS, "dropRecoveryMs": RECOVERY_MS})
    database = cluster.store.rsplit("/", 1)[1]
    try:
        c, a, b = cluster.nodes
        source = Client(c.url, "ada", workspace)
        target = Client(b.url, "ada", workspace)
        dropper = Client(a.url, "ada", workspace)
        scene = target.connected["scene"]
        item = {"activity": {"activityType": "panes.document", "title": "Notes", "targetContentIdentifier": "doc_n"},
                "operations": ["copy", "move"]}
        drag = source.request("beginDrag", items=[item])["drag"]
        # a lists b's window live (its switcher), as a person dropping onto it would see.
        deadline = time.monotonic() + 10
        while not any(s.get("scene") == scene for s in dropper.request("listSessions")["sessions"]):
            assert time.monotonic() < deadline, "a never heard of b's window"
            time.sleep(0.05)

        b.process.send_signal(signal.SIGSTOP)
        try:
            sent = time.monotonic()
            # a may not have heard of the drag yet (a few milliseconds): a person's drop takes longer.
            while True:
                request = dropper.send("drop", drag=drag, target="scene", scene=scene, operation="move",
                                       idempotencyKey="recover-1")
                ended = ""
                while not ended and time.monotonic() - sent < 10:
                    ended = pg.psql(f"SELECT settled FROM drag_ends WHERE drag = '{drag}'", database)
                    if not ended:
                        try:
                            reply = dropper.reply(request, timeout=0.01)
                        except TimeoutError:
                            continue
                        assert reply["error"]["code"] == "drag_not_found", reply
                        break
                if ended:
                    break
                assert time.monotonic() - sent < 10, "the drop never reached the database"
                time.sleep(0.02)
            a.kill()
            assert ended == "f", "stored as the drag's ending, settled by nobody yet"
        finally:
            b.kill()
        assert pg.psql(f"SELECT settled FROM drag_ends WHERE drag = '{drag}'", database) == "f", \
            "a died before its take-back"

        returned = source.event("dragEnded", timeout=(DRAG_LIFETIME_MS + LEASE_MS + RECOVERY_MS) / 1000 + 20)
        assert returned["drag"] == drag and returned["outcome"] == "returned", returned
        assert pg.psql(f"SELECT settled FROM drag_ends WHERE drag = '{drag}'", database) == "t"
        source.drain(1)
        more = [event for event in source.events if event.get("type") == "dragEnded"]
        assert more == [], f"told once: {more}"

        # The drop's retry, from the reloaded dropping window through c: nothing of it was applied.
        retrier = Client(c.url, "ada", workspace)
        retried = retrier.reply(retrier.send("drop", drag=drag, target="scene", scene=scene, operation="move",
                                             idempotencyKey="recover-1"))
        assert not retried["ok"] and retried["error"]["code"] in ("drag_not_found", "drag_already_dropped"), retried
    finally:
        cluster.close()
