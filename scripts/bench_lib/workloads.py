"""The workloads: each run starts one system fresh, measures, and stops it.

- connect: N idle connections (Panes: scenes); time to connect them all, the
  connect latency of each, and the server's resident memory per connection.
- fanout: one writer, N observers; each change is written once the previous
  one has reached every observer. Latency = write -> the LAST observer has it.
- throughput: as fanout, with several changes in flight: changes/s sustained.

Memory per connection = (VmRSS with N connected - VmRSS before) / connected.
CPU = utime + stime from /proc for the server, and the generator's own
getrusage, over the same phase (connecting, or measuring).
"""
from __future__ import annotations

import os
import time
from typing import Optional

from . import log, procs
from .loadgen import Generator, source_address, split

SETTLE = 0.5  # seconds for a server to settle before its memory is read


def _ms(hist: Optional[dict]) -> Optional[dict]:
    if not hist or not hist.get("count"):
        return None
    return {k: round(hist[k] / 1e6, 3) for k in ("p50", "p90", "p99", "p99_9", "max", "mean", "min")
            if k in hist} | {"count": hist["count"]}


def _row(workload: str, n: int, system) -> dict:
    return {"workload": workload, "n": n, "system": system.name, "label": system.label,
            "status": "ok", "reason": None}


def _memory(base: dict, now: dict, connected: int) -> dict:
    per = (now["rss_kb"] - base["rss_kb"]) / connected if connected else None
    return {"base_rss_kb": base["rss_kb"], "rss_kb": now["rss_kb"], "hwm_kb": now["hwm_kb"],
            "per_conn_kb": round(per, 2) if per is not None else None}


def _first_error(results: list[Optional[dict]]) -> str:
    for r in results:
        if r and r.get("first_error"):
            return r["first_error"]
    return ""


def run_connect(ctx, system, n: int) -> dict:
    row = _row("connect", n, system)
    workdir = ctx.run_dir(f"connect-{system.name}-{n}")
    running = system.start(ctx, workdir)
    try:
        time.sleep(SETTLE)
        base, cpu0 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        phase = procs.Phase()
        parts = split(n)
        gens, offset = [], 0
        for k, part in enumerate(parts):
            args = ["connect", "--protocol", system.protocol, "--port", str(running.port),
                    "--n", str(part), "--hold", "-1", "--first-index", str(offset),
                    "--concurrency", str(max(32, 256 // len(parts))), "--quiet",
                    "--timeout", str(ctx.timeout), *source_address(k, len(parts)),
                    *system.generator_args(ctx, "connect", n)]
            gens.append(Generator(args, os.path.join(workdir, f"load-{k}.log")))
            offset += part
        readies = [g.wait("ready", ctx.timeout) for g in gens]
        time.sleep(SETTLE)
        mem, cpu1 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        phase.end()
        alive = running.proc.poll() is None
        for g in gens:
            g.close_stdin()
        results = [g.finish(30) or r for g, r in zip(gens, readies)]
    finally:
        procs.stop(running.proc)

    got = [r for r in results if r]
    connected = sum(r["ready"] for r in got)
    gen_cpu = round(sum(r.get("cpu_connect_s", 0) for r in got), 3)
    row.update({
        "processes": len(parts),
        "connected": connected,
        "failed": n - connected,
        "connect_seconds": max((r["connect_seconds"] for r in got), default=None),
        # One process: exact. Several: the worst process's figures (conservative).
        "latency_ms": _ms(max((r["connect_latency_ns"] for r in got),
                              key=lambda h: h.get("p99", 0), default=None)),
        "memory": _memory(base, mem, connected),
        "cpu": {"server_s": round(cpu1 - cpu0, 3), "generator_s": gen_cpu,
                **phase.background(cpu1 - cpu0, gen_cpu)},
        "generator": got,
    })
    if len(got) < len(gens) or not alive:
        row["status"], row["reason"] = "failed", ("server exited" if not alive else "a generator did not report")
    elif connected < n:
        row["status"] = "partial"
        cap = " (its cap: 20,000 open files per process)" if 19000 < connected < 20000 else ""
        row["reason"] = f"server accepted {connected} of {n}{cap}: {_first_error(got)}"
    return row


def run_fanout(ctx, system, n: int, writes: int, warmup: int, inflight: int,
               workload: str = "fanout") -> dict:
    row = _row(workload, n, system)
    workdir = ctx.run_dir(f"{workload}-{system.name}-{n}")
    running = system.start(ctx, workdir)
    try:
        time.sleep(SETTLE)
        base, cpu0 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        args = ["fanout", "--protocol", system.protocol, "--port", str(running.port),
                "--n", str(n), "--writes", str(writes), "--warmup", str(warmup),
                "--inflight", str(inflight), "--payload", str(ctx.payload), "--wait-go", "--quiet",
                "--timeout", str(ctx.timeout), "--write-timeout", str(ctx.write_timeout),
                *system.generator_args(ctx, workload, n)]
        gen = Generator(args, os.path.join(workdir, "load.log"))
        ready = gen.wait("ready", ctx.timeout)
        time.sleep(SETTLE)
        mem, cpu1 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        phase = procs.Phase()
        gen.send("go")
        result = gen.finish(ctx.timeout)
        cpu2 = procs.cpu_seconds(running.pid)
        phase.end()
        alive = running.proc.poll() is None
    finally:
        procs.stop(running.proc)

    r = result or ready or {}
    connected = r.get("ready", 0)
    row.update({
        "connected": connected,
        "failed": r.get("failed", n + 1),
        "connect_seconds": r.get("connect_seconds"),
        "writes": writes, "warmup": warmup, "inflight": inflight, "payload_bytes": ctx.payload,
        "latency_ms": _ms(r.get("latency_last_ns")),
        "each_latency_ms": _ms(r.get("latency_each_ns")),
        "ack_ms": _ms(r.get("ack_ns")),
        "changes_per_sec": r.get("changes_per_sec"),
        "deliveries_per_sec": r.get("deliveries_per_sec"),
        "lost": r.get("lost"),
        "memory": _memory(base, mem, connected),
        "cpu": {"server_s": round(cpu2 - cpu1, 3), "generator_s": r.get("cpu_run_s"),
                **phase.background(cpu2 - cpu1, r.get("cpu_run_s")),
                "connect_server_s": round(cpu1 - cpu0, 3), "connect_generator_s": r.get("cpu_connect_s")},
        "generator": r,
    })
    if not result:
        row["status"], row["reason"] = "failed", ("server exited" if not alive else "no result from panes-load")
    elif not row["latency_ms"]:
        # Nothing measured: typically the server refused to observe (not implemented yet).
        row["status"] = "unavailable"
        row["reason"] = r.get("first_error") or "no change reached every observer"
    elif r.get("lost"):
        row["status"] = "partial"
        row["reason"] = f"{r['lost']} changes did not reach every observer in {ctx.write_timeout:g} s"
    elif connected < n + 1:
        row["status"] = "partial"
        row["reason"] = f"only {connected - 1} of {n} observers connected: {r.get('first_error', '')}"
    if row["status"] != "ok":
        log(f"  {system.label}: {row['status']}: {row['reason']}")
    return row
