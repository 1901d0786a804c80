"""What holding idle connections costs a server (issue 14's first rows).

- idle: N idle connections (Panes: scenes, 100 per user) held and nothing
  happening; the server's CPU over a fixed window (10 s in full and quick
  mode), in cores, and how often it woke up. The server alone, before anyone
  connects, is measured the same way first (`empty`). Memory per connection
  is counted from after one connection made and closed (first-use set-up is
  not per connection).
- connect-under-load: with N idle held, one more connection at a time (TCP,
  upgrade, Panes `connect`); for each, the server's CPU from just before it
  starts until a short tail after it is ready (so work done after the reply,
  such as a store write, counts), minus what the server burns idle over the
  same time, and the connect latency the client saw.

CPU here is the sum of every server thread's schedstat run time (ns), not
/proc's 10 ms ticks, which are too coarse for one connect.
"""
from __future__ import annotations

import os
import statistics
import time

from . import log, procs
from .loadgen import Generator, hold, release
from .workloads import settle, _row, measuring


def _cpu_window(pid: int, seconds: float) -> dict:
    c0, w0, t0 = procs.cpu_ns(pid), procs.wakeups(pid), time.monotonic()
    time.sleep(seconds)
    c1, w1, t1 = procs.cpu_ns(pid), procs.wakeups(pid), time.monotonic()
    wall = t1 - t0
    return {"seconds": round(wall, 3), "cpu_ms": round((c1 - c0) / 1e6, 3),
            "cores": round((c1 - c0) / 1e9 / wall, 5), "wakeups_per_sec": round((w1 - w0) / wall, 1)}


def _held(readies) -> int:
    return sum(r["ready"] for r in readies if r)


def run_idle(ctx, system, n: int) -> dict:
    row = _row("idle", n, system)
    workdir = ctx.run_dir(f"idle-{system.name}-{n}")
    running = system.start(ctx, workdir)
    try:
        settle()
        empty = _cpu_window(running.pid, ctx.idle_empty_seconds)
        # One connection made and closed before the baseline: what a server sets up once, at its
        # first connection, is not a cost per connection (libcrypto loads its provider tables,
        # ~2 MB, at the first digest: lws's handshake SHA-1 in every server here, unless the
        # server hashed something as it started).
        release(*hold(ctx, system, running.port, 1, workdir, name="first"))
        settle()
        base = procs.memory_kb(running.pid)
        gens, readies = hold(ctx, system, running.port, n, workdir)
        time.sleep(ctx.after_connect)  # the server finishes what connecting started (store writes)
        mem = procs.memory_kb(running.pid)
        phase = procs.Phase()
        window = _cpu_window(running.pid, ctx.idle_seconds)
        phase.end()
        alive = running.proc.poll() is None
        results = release(gens, readies)
    finally:
        procs.stop(running.proc)
    connected = _held(readies)
    row.update({
        "connected": connected,
        "idle_seconds": ctx.idle_seconds,
        "idle": window,
        "empty": empty,
        "memory": {"base_rss_kb": base["rss_kb"], "rss_kb": mem["rss_kb"],
                   "per_conn_kb": round((mem["rss_kb"] - base["rss_kb"]) / connected, 2) if connected else None},
        "cpu": {"server_s": round(window["cpu_ms"] / 1000, 4), "generator_s": None,
                **phase.background(window["cpu_ms"] / 1000)},
        "generator": [r for r in results if r],
    })
    if not alive:
        row["status"], row["reason"] = "failed", "server exited"
    elif connected < n:
        row["status"], row["reason"] = "partial", f"server accepted {connected} of {n}"
    log(f"  idle: {window['cores']:.4f} cores, {window['wakeups_per_sec']:g} wakeups/s "
        f"(empty server: {empty['cores']:.4f} cores, {empty['wakeups_per_sec']:g}/s)")
    return row


def _pct(values: list[float], p: float):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def run_connect_under_load(ctx, system, n: int) -> dict:
    row = _row("connect-under-load", n, system)
    workdir = ctx.run_dir(f"connect-under-load-{system.name}-{n}")
    running = system.start(ctx, workdir)
    probes = ctx.probe_count
    costs, to_reply, latencies, failures = [], [], [], 0
    probe = None
    try:
        settle()
        gens, readies = hold(ctx, system, running.port, n, workdir)
        time.sleep(ctx.after_connect)  # the server finishes what connecting started (store writes)
        idle = _cpu_window(running.pid, ctx.probe_idle_seconds)
        idle_ns_per_s = idle["cpu_ms"] * 1e6 / idle["seconds"]
        probe = Generator(["probe", "--protocol", system.protocol, "--port", str(running.port),
                           "--n", str(probes), "--hold", "-1", "--quiet", "--timeout", str(ctx.timeout),
                           *system.generator_args(ctx, "probe", 1)], os.path.join(workdir, "probe.log"))
        if not probe.wait("ready", 30):
            raise RuntimeError("the probe did not start")
        phase = procs.Phase()
        with measuring(ctx, running.pid):
            for _ in range(probes):
                time.sleep(ctx.probe_gap)  # the previous connect's after-work is over
                c0, t0 = procs.cpu_ns(running.pid), time.monotonic()
                probe.send("go")
                ev = probe.wait("connected", 30)
                c1 = procs.cpu_ns(running.pid)
                time.sleep(ctx.probe_tail)
                c2, t2 = procs.cpu_ns(running.pid), time.monotonic()
                if not ev or not ev.get("ok"):
                    failures += 1
                    continue
                latencies.append(ev["latency_ns"] / 1e6)
                to_reply.append((c1 - c0) / 1e6)
                costs.append(max(0.0, (c2 - c0) - idle_ns_per_s * (t2 - t0)) / 1e6)
        phase.end()
        alive = running.proc.poll() is None
        probe.close_stdin()
        probe.finish(10)
        release(gens, readies)
    finally:
        procs.stop(running.proc)
    connected = _held(readies)

    def summary(values):
        if not values:
            return None
        return {"count": len(values), "p50": round(statistics.median(values), 3),
                "p90": round(_pct(values, 90), 3), "max": round(max(values), 3),
                "mean": round(statistics.fmean(values), 3), "min": round(min(values), 3)}

    row.update({
        "connected": connected, "probes": probes, "probe_failures": failures,
        "probe_gap_s": ctx.probe_gap, "probe_tail_s": ctx.probe_tail,
        "idle": idle,
        "connect_cpu_ms": summary(costs),          # with after-work, idle subtracted
        "connect_cpu_to_reply_ms": summary(to_reply),  # start -> ready, nothing subtracted
        "latency_ms": summary(latencies),
        "cpu": {"server_s": round(sum(costs) / 1000, 4), "generator_s": None, **phase.background(sum(costs) / 1000)},
    })
    if not alive:
        row["status"], row["reason"] = "failed", "server exited"
    elif failures:
        row["status"], row["reason"] = "partial", f"{failures} of {probes} probe connects failed"
    elif connected < n:
        row["status"], row["reason"] = "partial", f"server accepted {connected} of {n} idle connections"
    c = row["connect_cpu_ms"] or {}
    lat = row["latency_ms"] or {}
    log(f"  one more connect: server CPU median {c.get('p50')} ms (p90 {c.get('p90')}), latency median "
        f"{lat.get('p50')} ms, max {lat.get('max')} ms; idle {idle['cores']:.4f} cores")
    return row
