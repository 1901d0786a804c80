"""Issue 27, section 5: fencing. Once another node has found a node gone (its liveness lock
free) and ended its lease, nothing the old node writes commits: every store transaction of a
node checks, inside it, that the node's lease runs. The old node learns it was revoked, closes
its scenes with 4011 as when cut off, and comes back under a new identity.

The node is frozen (SIGSTOP) while its heartbeat's connection is cut and the other node ends its
lease, so its next write reaches the store before it could have heard of the end: the write is
refused, never acknowledged, and the window resumes on the other node with what it had."""

from __future__ import annotations

import re
import signal
import time

from panes_cluster import Client, Cluster


def node_id(node) -> str:
    """The node's identity, from the line it logs once loaded."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in list(node.log):
            match = re.search(r"node=(node_[0-9a-z]+) .*\bloaded\b", line)
            if match:
                return match.group(1)
        time.sleep(0.05)
    raise AssertionError("the node never logged its identity:\n" + "".join(node.log[-20:]))


def lease_until(pg, database: str, node: str) -> int:
    return int(pg.psql(f"SELECT lease_until FROM nodes WHERE id = '{node}'", database) or "0")


def cut_heartbeat(pg, database: str, node: str) -> int:
    """Ends the backend holding the node's liveness lock (its heartbeat's connection)."""
    key = f"hashtextextended('panes-node:{node}', 0)"
    return int(pg.psql(
        "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks AS l "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
        f"AND l.classid = (({key} >> 32) & 4294967295)::oid AND l.objid = ({key} & 4294967295)::oid",
        database))


def freeze_between_transactions(pg, database: str, process) -> None:
    """Freezes the node (SIGSTOP) outside any store transaction of its own. Frozen inside one,
    it holds its fence's share lock on its row, and no other node can end its lease until the
    database ends that transaction (`idle_in_transaction_session_timeout`, the whole lease):
    under load that happened, and the wait below ran out (issue 27)."""
    for _ in range(50):
        process.send_signal(signal.SIGSTOP)
        time.sleep(0.3)
        # The other node's transactions last milliseconds; a frozen one stays open.
        held = pg.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%' "
                       "AND now() - state_change > interval '200 milliseconds'", database)
        if held == "0":
            return
        process.send_signal(signal.SIGCONT)
        time.sleep(0.2)
    raise AssertionError("the node was inside a store transaction at every try")


def test_a_write_of_a_node_revoked_before_it_ran_is_refused_and_its_scenes_close_with_4011(pg, workspace):
    # A long lease: only the liveness lock ends a's lease here, never the clock.
    cluster = Cluster(pg, nodes=2, haproxy=False, lease_ms=20_000)
    database = cluster.store.rsplit("/", 1)[1]
    try:
        a, b = cluster.nodes
        old = node_id(a)
        window = Client(a.url, "ada", workspace)
        window.request("setUserInfo", userInfo={"v": 1})
        credentials = window.credentials
        freeze_between_transactions(pg, database, a.process)
        try:
            assert cut_heartbeat(pg, database, old) == 1
            # b finds a's lock free at its next heartbeat and ends its lease for good (-1).
            deadline = time.monotonic() + 10
            while lease_until(pg, database, old) != -1:
                assert time.monotonic() < deadline, "b never ended a's lease"
                time.sleep(0.05)
            # Sent while a is frozen: a reads it as soon as it runs again, before it can know.
            request = window.send("setUserInfo", userInfo={"v": 2})
        finally:
            a.process.send_signal(signal.SIGCONT)
        # Never acknowledged, and its scene is closed with the reconnect code.
        assert window.closed_unacknowledged(request) == 4011

        # Nothing of the write is stored: the window resumes on b with what it had.
        again = Client(b.url, "ada", workspace, session=credentials, timeout=15)
        assert again.connected["created"] is False, again.connected
        assert again.connected["session"]["persistentIdentifier"] == credentials["id"]
        assert again.connected["session"]["userInfo"] == {"v": 1}
        assert lease_until(pg, database, old) == -1, "the old identity stays ended"
        again.close()

        # a comes back as a new node, and serves again.
        deadline = time.monotonic() + 15
        while not any("serving again as a new node" in line for line in list(a.log)):
            assert time.monotonic() < deadline, "a never rejoined:\n" + "".join(a.log[-20:])
            time.sleep(0.05)
        fresh = Client(a.url, "bob", workspace)
        fresh.request("setUserInfo", userInfo={"after": True})
        fresh.close()
    finally:
        cluster.close()
