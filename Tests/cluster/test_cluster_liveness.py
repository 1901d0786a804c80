"""Issue 27, sections 3–5: a window comes back, it does not fork, when no other window lives
(a claim release lost in an outage, a holder killed right after a connect came); a node is
quiet and cheap while PostgreSQL is down; a killed node's windows resume without waiting out
its lease (its liveness lock is gone with its connection).

The leases here are long (15–20 s) on purpose: a connect answered well inside one did not wait
it out. Measured times are printed (`pytest -s`) and belong in the bench (`scripts/bench
cluster-failover`), not in assertions."""

from __future__ import annotations

import os
import signal
import threading
import time

from panes_cluster import Client, Cluster

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def resume(url: str, credentials: dict, workspace: str, timeout: float) -> dict:
    """Connects with the session's id and secret, retrying what a client retries (a refused
    socket, a `storage_failed` answer) until `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client = Client(url, "ada", workspace, session=credentials, timeout=max(0.5, deadline - time.monotonic()))
            connected = client.connected
            client.close()
            return connected
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_release_lost_in_an_outage_resumes_on_another_node_not_forks(pg, workspace):
    """The window's scene ends while PostgreSQL is down, so the holding node cannot write the
    release of its claim; its reload through another node, right after the database is back
    (the holder still waiting out its store backoff), resumes the session."""
    cluster = Cluster(pg, nodes=2, haproxy=False, lease_ms=20_000)
    try:
        a, b = cluster.nodes
        window = Client(a.url, "ada", workspace)
        window.request("setUserInfo", userInfo={"kept": 1})
        credentials = window.credentials
        # b has read the session and who holds it.
        Client(b.url, "ada", workspace).request("listSessions")
        pg.stop_server()
        try:
            window.close()
            time.sleep(4)  # a's release fails, its held writes back off to ~2 s
        finally:
            pg.start_server()
        started = time.monotonic()
        connected = resume(b.url, credentials, workspace, timeout=12)
        print(f"\nresumed on b {time.monotonic() - started:.2f} s after PostgreSQL was back")
        assert connected["created"] is False, connected
        assert connected.get("forkedFrom") is None
        assert connected["session"]["persistentIdentifier"] == credentials["id"]
        assert connected["session"]["userInfo"] == {"kept": 1}
    finally:
        cluster.close()


def test_a_holder_killed_right_after_a_connect_arrived_is_resumed_not_forked(pg, workspace):
    """A connect for a session live on node a reaches node b; a is frozen, so it cannot answer
    b's probe, and killed with SIGKILL right after. b finds a gone (its lock is free with its
    connection) and resumes the session: no other window lives."""
    cluster = Cluster(pg, nodes=2, haproxy=False, lease_ms=20_000)
    try:
        a, b = cluster.nodes
        window = Client(a.url, "ada", workspace)
        credentials = window.credentials
        Client(b.url, "ada", workspace).request("listSessions")
        a.process.send_signal(signal.SIGSTOP)
        result: dict = {}

        def reconnect() -> None:
            started = time.monotonic()
            try:
                result["connected"] = Client(b.url, "ada", workspace, session=credentials, timeout=15).connected
            except Exception as error:  # noqa: BLE001 - reported below
                result["error"] = error
            result["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=reconnect)
        thread.start()
        time.sleep(0.3)  # the connect has reached b, which asked a
        a.kill()
        thread.join(timeout=20)
        print(f"\nresumed {result.get('seconds', -1):.2f} s after the connect (lease 20 s)")
        assert "error" not in result, result.get("error")
        connected = result["connected"]
        assert connected["created"] is False, connected
        assert connected["session"]["persistentIdentifier"] == credentials["id"]
    finally:
        cluster.close()


def test_windows_of_a_killed_node_resume_through_haproxy_well_before_its_lease(pg, workspace):
    """kill -9 of a node with windows on it: every window reconnects through haproxy and
    resumes its own session, with everything it had written, long before the lease (15 s)."""
    lease_ms = 15_000
    cluster = Cluster(pg, nodes=2, lease_ms=lease_ms)
    try:
        a, b = cluster.nodes
        windows = []
        for i in range(12):
            window = Client(a.url, f"u{i}", workspace)
            window.request("setUserInfo", userInfo={"n": i})
            windows.append((f"u{i}", window.credentials))
        killed = time.monotonic()
        a.kill()
        times, results = [], []
        for name, credentials in windows:
            deadline = time.monotonic() + lease_ms / 1000
            while True:
                try:
                    client = Client(cluster.url, name, workspace, session=credentials, timeout=lease_ms / 1000)
                    break
                except Exception:
                    assert time.monotonic() < deadline, "the window could not reconnect"
                    time.sleep(0.05)
            times.append(time.monotonic() - killed)
            results.append((credentials, client.connected))
            client.close()
        print(f"\nevery window answered {max(times):.2f} s after kill -9 (lease {lease_ms / 1000:.0f} s): "
              f"{[round(t, 2) for t in times]}")
        for credentials, connected in results:
            assert connected["created"] is False, connected
            assert connected["session"]["persistentIdentifier"] == credentials["id"]
        assert sorted(c["session"]["userInfo"]["n"] for _, c in results) == list(range(12)), "nothing lost"
        # Robust on a loaded machine: not waited out (half the lease), whatever the exact time.
        assert max(times) < lease_ms / 2000, f"{max(times):.2f} s: the lease was waited out"
    finally:
        cluster.close()


def test_a_node_is_quiet_and_cheap_while_postgres_is_down(pg, workspace):
    """Over a 5 s outage, with windows on both nodes doing what windows do (a reload, a write,
    a resume of a session the node has not read), each node logs a handful of lines, not a
    flood, and spends little CPU."""
    cluster = Cluster(pg, nodes=2, haproxy=False, lease_ms=20_000)
    try:
        a, b = cluster.nodes
        windows = [Client(node.url, "ada", workspace) for node in (a, b)]
        for window in windows:
            window.request("observe", domain="user", keyPath="editor", options=["new"])
        logged = [len(node.log) for node in cluster.nodes]
        cpu = [cpu_seconds(node.process.pid) for node in cluster.nodes]
        pg.stop_server()
        started = time.monotonic()
        try:
            windows[0].close()  # its release fails
            for node in cluster.nodes:
                # A session this node has not read: it reads the records, which fails.
                try:
                    Client(node.url, "ada", workspace, session={"id": "0" * 32, "secret": "x"}, timeout=3)
                except Exception:
                    pass
            try:
                windows[1].request("setPreference", domain="user", keyPath="editor.size", value=1, timeout=3)
            except Exception:
                pass
            time.sleep(max(0.0, 5 - (time.monotonic() - started)))
            seconds = time.monotonic() - started
            lines = [len(node.log) - before for node, before in zip(cluster.nodes, logged)]
            used = [cpu_seconds(node.process.pid) - before for node, before in zip(cluster.nodes, cpu)]
        finally:
            pg.start_server()
        print(f"\noutage {seconds:.1f} s: log lines per node {lines}, CPU seconds per node "
              f"{[round(u, 3) for u in used]}")
        for node, count in zip(cluster.nodes, lines):
            assert count < 100, f"node {node.index} logged {count} lines in {seconds:.1f} s:\n" + "".join(node.log[-20:])
    finally:
        cluster.close()
