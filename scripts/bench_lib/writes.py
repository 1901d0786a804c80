"""Durable preference writes (issue 14's acklat, issue 13 item 9's prefwrite).

- acklat: W writers (each its own user, writing its own key) send
  `setPreference` on a fixed schedule, R writes a second in all, whatever is
  outstanding (open loop). Latency = from the write's *scheduled* time until
  its acknowledgement (sent once the write is durable), so a stall of the
  server delays every write scheduled during it and none is hidden. R = 0 is
  the ceiling instead: each writer keeps K writes in flight (closed loop) and
  the acknowledged writes per second are the sustained durable write rate.
- prefwrite: one user whose domain holds K keys (10 and 10,000, in the same
  run) writes one key, one write at a time; per write: the latency and the
  server's CPU (its CPU over the measured window / writes acknowledged).
"""
from __future__ import annotations

import os
import time
from typing import Optional

from . import log, procs
from .loadgen import Generator
from .workloads import settle, _ms, _row


def _writes(ctx, system, workdir: str, port: int, *, writers: int, rate: float, inflight: int, keys: int,
            warmup: float, seconds: float, user: str) -> Generator:
    args = ["writes", "--protocol", system.protocol, "--port", str(port), "--n", str(writers),
            "--user", user, "--users", str(writers), "--key-path", "bench", "--rate", f"{rate:g}",
            "--inflight", str(inflight), "--keys", str(keys), "--warmup-time", f"{warmup:g}",
            "--duration", f"{seconds:g}", "--payload", str(ctx.payload), "--wait-go", "--quiet",
            "--timeout", str(ctx.timeout), "--write-timeout", str(ctx.write_timeout)]
    if getattr(ctx, "idempotency_keys", False):
        args.append("--idempotency-keys")
    return Generator(args, os.path.join(workdir, "load.log"))


def _status(row: dict, result: Optional[dict], alive: bool, what: str) -> None:
    r = result or {}
    if not result:
        row["status"], row["reason"] = "failed", ("server exited" if not alive else "no result from panes-load")
    elif not (r.get("ack_ns") or {}).get("count"):
        row["status"], row["reason"] = "unavailable", r.get("first_error") or f"no {what} was acknowledged"
    elif r.get("lost") or r.get("refused_writes"):
        row["status"] = "partial"
        row["reason"] = (f"{r.get('lost', 0)} writes not acknowledged in time, "
                         f"{r.get('refused_writes', 0)} refused: {r.get('first_error', '')}")
    if row["status"] != "ok":
        log(f"  {row['label']}: {row['status']}: {row['reason']}")


def run_acklat(ctx, system, rate: int) -> dict:
    """rate > 0: open loop at `rate` writes/s; rate == 0: closed loop, the sustained ceiling."""
    row = _row("acklat", rate, system)
    workdir = ctx.run_dir(f"acklat-{system.name}-{rate or 'max'}")
    running = system.start(ctx, workdir)
    try:
        settle()
        gen = _writes(ctx, system, workdir, running.port, writers=ctx.acklat_writers, rate=rate,
                      inflight=ctx.acklat_inflight, keys=0, warmup=ctx.acklat_warmup,
                      seconds=ctx.acklat_seconds, user="writer")
        ready = gen.wait("ready", ctx.timeout)
        settle()
        c0, t0 = procs.cpu_seconds(running.pid), time.monotonic()
        phase = procs.Phase()
        if ready:
            gen.send("go")
        result = gen.finish(ctx.timeout)
        c1 = procs.cpu_seconds(running.pid)
        phase.end()
        alive = running.proc.poll() is None
    finally:
        procs.stop(running.proc)
    r = result or ready or {}
    acked = r.get("acked") or 0
    row.update({
        "connected": r.get("ready", 0), "writers": ctx.acklat_writers,
        "mode": "open" if rate else "closed", "rate": rate,
        "inflight": None if rate else ctx.acklat_inflight,
        "warmup_s": ctx.acklat_warmup, "measure_s": ctx.acklat_seconds,
        "sent": r.get("sent"), "acked": acked, "lost": r.get("lost"), "refused_writes": r.get("refused_writes"),
        "writes_per_sec": r.get("writes_per_sec"),
        "writes_per_second_min": r.get("writes_per_second_min"),
        "writes_per_second_max": r.get("writes_per_second_max"),
        "latency_ms": _ms(r.get("ack_ns")),
        "ack_from_send_ms": _ms(r.get("ack_from_send_ns")),
        "max_send_late_ms": round((r.get("max_send_late_ns") or 0) / 1e6, 3),
        "cpu": {"server_s": round(c1 - c0, 3), "generator_s": r.get("cpu_write_s"),
                "server_ms_per_write": round((c1 - c0) * 1000 / acked, 4) if acked else None,
                "server_cores": round((c1 - c0) / (time.monotonic() - t0), 3),
                **phase.background(c1 - c0, r.get("cpu_write_s"))},
        "generator": r,
    })
    _status(row, result, alive, "write")
    lat = row["latency_ms"] or {}
    log(f"  {'open loop ' + str(rate) + '/s' if rate else 'closed loop'}: {row['writes_per_sec']} writes/s acked, "
        f"p50 {lat.get('p50')} ms, p99 {lat.get('p99')} ms, p99.9 {lat.get('p99_9')} ms, max {lat.get('max')} ms")
    return row


def run_prefwrite(ctx, system, keys: int) -> dict:
    row = _row("prefwrite", keys, system)
    workdir = ctx.run_dir(f"prefwrite-{system.name}-{keys}")
    running = system.start(ctx, workdir)
    filled = None
    try:
        settle()
        gen = _writes(ctx, system, workdir, running.port, writers=1, rate=0, inflight=1, keys=keys,
                      warmup=0.5, seconds=ctx.prefwrite_seconds, user="prefwriter")
        ready = gen.wait("ready", ctx.timeout)
        f0 = procs.cpu_seconds(running.pid)
        if ready:
            gen.send("go")  # fill the domain
            filled = gen.wait("filled", ctx.timeout)
        settle()
        mem = procs.memory_kb(running.pid)
        c0, f1 = procs.cpu_ns(running.pid), procs.cpu_seconds(running.pid)
        phase = procs.Phase()
        if filled:
            gen.send("go")  # write
        result = gen.finish(ctx.timeout)
        c1 = procs.cpu_ns(running.pid)
        phase.end()
        alive = running.proc.poll() is None
    finally:
        procs.stop(running.proc)
    r = result or ready or {}
    acked = r.get("acked") or 0
    cpu_s = (c1 - c0) / 1e9
    row.update({
        "connected": r.get("ready", 0), "keys": keys, "measure_s": ctx.prefwrite_seconds,
        "acked": acked, "writes_per_sec": r.get("writes_per_sec"),
        "fill_seconds": (filled or {}).get("fill_seconds"), "fill_server_s": round(f1 - f0, 3),
        "fill_ms": _ms((filled or {}).get("fill_ns")),
        "latency_ms": _ms(r.get("ack_ns")),
        "memory": {"rss_kb": mem["rss_kb"]},
        "cpu": {"server_s": round(cpu_s, 4), "generator_s": r.get("cpu_write_s"),
                "server_ms_per_write": round(cpu_s * 1000 / acked, 4) if acked else None,
                **phase.background(cpu_s, r.get("cpu_write_s"))},
        "generator": r, "filled": filled,
    })
    _status(row, result, alive, "write")
    lat = row["latency_ms"] or {}
    log(f"  {keys:,} keys (filled in {row['fill_seconds']} s): {row['cpu']['server_ms_per_write']} ms server CPU "
        f"per write, latency p50 {lat.get('p50')} ms, p99 {lat.get('p99')} ms")
    return row
