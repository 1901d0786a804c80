"""The cluster rows (issue 11): Panes nodes sharing one PostgreSQL database, all on loopback.

- cluster-fanout: one writer on node 1 and N observers spread over the K nodes of a cluster
  (K = 1, 2, 3; client i on node i mod K: panes-load --ports). As fanout: one change at a time,
  latency = the write until the LAST observer has it; and every delivery split into same-node
  (the observer is on the writer's node) and cross-node (node 1 commits, PostgreSQL NOTIFY
  tells the others, which read it and send it on).
- cluster-docs: E editors typing as fast as the server lets them into one hot document, spread
  over 2 nodes, all on one node (PostgreSQL), and on single-node SQLite (`panes`), same run:
  sustained durable ops/s and the acknowledgement p99.
- cluster-failover (issue 27): N windows on node 1 of 3, node 1 killed with SIGKILL, every
  window reconnecting through haproxy: the time until each is answered (p50/p99/max) and
  whether it resumed its own session (default `nodeLeaseMs`, 5 s: the goal is p99 within 1 s).

Each cluster row also has, per node and over the measured phase, its CPU (utime + stime from
/proc/PID/stat), the ops/s it carried and its CPU per op, and PostgreSQL's own CPU (every
process of the private PostgreSQL: backends, WAL writer, checkpointer), so the scaling can be
projected. The 1-node cluster is the baseline, measured in the same run.

The durable acknowledgement latency at 1,000 writes/s on PostgreSQL is the acklat row on
`panes-pg` (writes.py), not repeated here.
"""
from __future__ import annotations

import json
import os
import time
from typing import Optional

from . import procs
from .systems import PANES_SETTINGS, READY_LINE, Panes, Running, _postgres


def postgres_cpu_seconds() -> float:
    """utime + stime of the private PostgreSQL: its postmaster and every child of it."""
    if not _postgres.dir:
        return 0.0
    home_file = os.path.join(_postgres.dir, "cluster-home")
    home = open(home_file).read().strip() if os.path.exists(home_file) else _postgres.dir
    try:
        with open(os.path.join(home, "data", "postmaster.pid")) as f:
            master = int(f.readline())
    except (OSError, ValueError):
        return 0.0
    total = procs.cpu_seconds(master)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:  # ppid
            total += (int(fields[11]) + int(fields[12])) / procs.CLOCK_TICKS
    return total


class ClusterRunning(Running):
    """The nodes of one cluster: `proc` is node 1 (the writer's), `others` the rest."""

    @property
    def nodes(self) -> list:
        return [self.proc, *self.others]

    def snapshot(self) -> dict:
        return {"t": time.monotonic(), "nodes": [procs.cpu_seconds(p.pid) for p in self.nodes],
                "postgres": postgres_cpu_seconds()}

    def describe(self, before: dict, after: dict, ops: int, seconds: float) -> Optional[dict]:
        if not before or not after:
            return None
        seconds = seconds or (after["t"] - before["t"])
        cpu = [round(b - a, 3) for a, b in zip(before["nodes"], after["nodes"])]
        pg = round(after["postgres"] - before["postgres"], 3)
        k = len(cpu)
        per_op = (lambda s: round(s * 1000 / ops, 4) if ops else None)
        return {
            "nodes": k, "ops": ops, "seconds": round(seconds, 3),
            "ops_per_sec": round(ops / seconds, 1) if seconds else None,
            "ops_per_sec_per_node": round(ops / seconds / k, 1) if seconds else None,
            "node_cpu_s": cpu,
            "node_cores": [round(c / seconds, 3) if seconds else None for c in cpu],
            "node_ms_per_op": [per_op(c) for c in cpu],
            "server_ms_per_op": per_op(sum(cpu)),
            "postgres_cpu_s": pg,
            "postgres_cores": round(pg / seconds, 3) if seconds else None,
            "postgres_ms_per_op": per_op(pg),
        }


class PanesCluster(Panes):
    """K `panes serve --store postgres://…` nodes on one fresh database, started for every run."""

    def __init__(self, nodes: int):
        super().__init__("postgres")
        self.nodes = nodes
        self.name = f"cluster-{nodes}"
        self.label = f"Panes cluster, {nodes} node{'s' if nodes > 1 else ''} (PostgreSQL)"
        self.note = (f"{nodes} `panes serve --store postgres://…/db --port 0 --public-url …` process"
                     f"{'es' if nodes > 1 else ''} on one fresh database of a private PostgreSQL 15 "
                     "(fsync and synchronous_commit on, TCP on 127.0.0.1); panes-load sends client i "
                     "to node i mod K (`--ports`), the writer and editor 0 to node 1. Per node: CPU "
                     "from /proc/PID/stat over the measured phase; PostgreSQL's CPU is every process "
                     "of its cluster.")
        self.workloads = ("cluster-fanout", "cluster-docs", "cluster-failover")

    def start(self, ctx, workdir: str) -> Running:
        os.makedirs(workdir, exist_ok=True)
        config = os.path.join(workdir, "panes-config.json")
        known = ctx.panes_settings()
        with open(config, "w") as f:
            json.dump({"settings": {k: v for k, v in PANES_SETTINGS.items() if k in known}}, f)
        store = _postgres.fresh_database()
        started, ports = [], []
        try:
            for i in range(self.nodes):
                argv = [ctx.panes_bin, "serve", "--host", "127.0.0.1", "--port", "0",
                        "--data", os.path.join(workdir, f"data-{i + 1}"), "--store", store,
                        "--public-url", "http://127.0.0.1", "--config", config, "--log-level", "warning",
                        *ctx.server_args]
                proc = procs.start(argv, log=os.path.join(workdir, f"node-{i + 1}.log"), cwd=workdir)
                started.append(proc)
                m = procs.wait_for_line(proc, READY_LINE, 60)
                if not m:
                    raise RuntimeError(f"node {i + 1} did not print its port (see {workdir}/node-{i + 1}.log)")
                procs.drain(proc)
                ports.append(int(m.group(1)))
        except Exception:
            for p in started:
                procs.stop(p)
            raise
        return ClusterRunning(started[0], ports[0], workdir, others=started[1:],
                              generator_args=["--ports", ",".join(map(str, ports))])


class PanesFailover(PanesCluster):
    """The storm row's failover at scale: two nodes, every window on node 1, node 1 killed, every
    window straight to node 2 (storm.py). The cluster-failover row is the same fault through
    haproxy, a few windows at a time."""

    def __init__(self):
        super().__init__(2)
        self.name = "cluster-2-failover"
        self.label = "Panes cluster, failover to node 2 (PostgreSQL)"
        self.restart = "failover"
        self.note = ("2 nodes on one fresh database of a private PostgreSQL 15, as the cluster rows; every window "
                     "connects to node 1, which is killed (kill -9); at once they all resume through node 2, "
                     "which takes a dead node's sessions over once it finds the node gone (its liveness lock "
                     "free, or its lease, `nodeLeaseMs`, run out). Its CPU and memory are node 2's.")
        self.workloads = ("storm",)


def cluster_systems() -> list[Panes]:
    return [*(PanesCluster(k) for k in (1, 2, 3)), PanesFailover()]


def run_cluster_docs(ctx, system, editors: int) -> dict:
    """E editors on one document as fast as the server lets them (cluster_docs_rate each)."""
    from .workloads import run_docs
    return run_docs(ctx, system, editors, workload="cluster-docs", rate=ctx.cluster_docs_rate,
                    seconds=ctx.cluster_docs_seconds)


def _percentile(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_cluster_failover(ctx, system, windows: int) -> dict:
    """cluster-failover (issue 27): N windows on node 1 of a 3-node cluster (each its own user
    and session, userInfo written), haproxy in front (round robin, `option redispatch 1`,
    health every 200 ms); node 1 is killed with SIGKILL and every window reconnects at once
    through haproxy with its id and secret, as a client does. Per window: the time from the
    kill until its `connect` is answered; whether it resumed (same session, its userInfo) or
    was given a new one. 20 connects in flight at a time (a client's reconnect is not queued
    behind the others'), or PANES_FAILOVER_IN_FLIGHT."""
    import asyncio
    import signal
    import socket
    import subprocess
    from .workloads import _row

    row = _row("cluster-failover", windows, system)
    workdir = ctx.run_dir(f"cluster-failover-{system.name}-{windows}")
    running = system.start(ctx, workdir)
    haproxy = None
    try:
        import websockets
        nodes = running.nodes
        ports = [int(a) for a in running.generator_args[1].split(",")]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            lb = s.getsockname()[1]
        cfg = os.path.join(workdir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("\n".join([
                "defaults", "  mode http", "  timeout connect 2s", "  timeout client 60s", "  timeout server 60s",
                "  timeout tunnel 1h", "frontend panes", f"  bind 127.0.0.1:{lb}", "  default_backend nodes",
                # The nodes' public URL is http://127.0.0.1 (started before the balancer's port is
                # known): the upgrades they receive name that host, or they would refuse them (403).
                "backend nodes", "  balance roundrobin", "  option redispatch 1", "  http-request set-header Host 127.0.0.1",
                "  option httpchk",
                "  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1",
                "  http-check expect status 200",
                *[f"  server node{i} 127.0.0.1:{p} check inter 200ms fall 2 rise 1" for i, p in enumerate(ports)],
            ]) + "\n")
        haproxy = subprocess.Popen(["haproxy", "-f", cfg, "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)

        async def connect(url: str, fields: dict, timeout: float) -> dict:
            async with websockets.connect(url, subprotocols=["panes.v1"], open_timeout=timeout,
                                          max_size=None, compression=None) as ws:
                await ws.send(json.dumps({"type": "connect", "id": 1, "protocol": 1, **fields}))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                    if message.get("type") == "reply" and message.get("re") == 1:
                        return message

        async def main() -> dict:
            opened = []
            for i in range(windows):
                fields = {"auth": {"name": f"f{i}"}, "workspace": "failover"}
                reply = await connect(f"ws://127.0.0.1:{ports[0]}/ws", fields, ctx.timeout)
                session = reply["result"]["session"]
                opened.append((fields, {"id": session["persistentIdentifier"], "secret": session["secret"]}))
            # userInfo on each (one socket per window, kept open until the kill)
            sockets = []
            for fields, credentials in opened:
                ws = await websockets.connect(f"ws://127.0.0.1:{ports[0]}/ws", subprotocols=["panes.v1"],
                                              max_size=None, compression=None)
                await ws.send(json.dumps({"type": "connect", "id": 1, "protocol": 1, "session": credentials, **fields}))
                await ws.send(json.dumps({"type": "setUserInfo", "id": 2, "userInfo": {"w": credentials["id"]}}))
                while True:
                    m = json.loads(await ws.recv())
                    if m.get("type") == "reply" and m.get("re") == 2:
                        break
                sockets.append(ws)
            await asyncio.sleep(0.5)
            killed = time.monotonic()
            os.kill(nodes[0].pid, signal.SIGKILL)
            gate = asyncio.Semaphore(int(os.environ.get("PANES_FAILOVER_IN_FLIGHT", "20")))
            times, resumed, forked, failed = [], 0, 0, 0

            async def back(fields: dict, credentials: dict) -> None:
                nonlocal resumed, forked, failed
                async with gate:
                    deadline = time.monotonic() + ctx.timeout
                    while time.monotonic() < deadline:
                        try:
                            reply = await connect(f"ws://127.0.0.1:{lb}/ws", {**fields, "session": credentials}, 10)
                        except Exception:
                            await asyncio.sleep(0.02)
                            continue
                        if not reply.get("ok"):
                            await asyncio.sleep((reply["error"].get("retryAfterMs") or 100) / 1000)
                            continue
                        times.append((time.monotonic() - killed) * 1000)
                        result = reply["result"]
                        same = result["session"]["persistentIdentifier"] == credentials["id"]
                        kept = result["session"].get("userInfo") == {"w": credentials["id"]}
                        if result["created"] is False and same and kept:
                            resumed += 1
                        else:
                            forked += 1
                        return
                    failed += 1

            await asyncio.gather(*(back(f, c) for f, c in opened))
            for ws in sockets:
                try:
                    await ws.close()
                except Exception:
                    pass
            return {"times": times, "resumed": resumed, "forked": forked, "failed": failed}

        outcome = asyncio.run(main())
        times = outcome["times"]
        row.update({
            "connected": outcome["resumed"], "resumed": outcome["resumed"], "forked": outcome["forked"],
            "unanswered": outcome["failed"],
            "answered_ms": {"p50": _percentile(times, 0.5), "p99": _percentile(times, 0.99),
                            "max": max(times) if times else None},
            "lease_ms": 5000,  # the default `nodeLeaseMs`, which this run keeps
        })
        if outcome["failed"] or outcome["forked"]:
            row["status"], row["reason"] = "failed", f"{outcome['forked']} forked, {outcome['failed']} unanswered"
    except Exception as error:  # noqa: BLE001 - a row reports its failure
        row["status"], row["reason"] = "failed", str(error)
    finally:
        if haproxy:
            haproxy.kill()
            haproxy.wait()
        running.stop()
    return row
