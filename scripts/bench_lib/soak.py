"""soak (issue 14): a server holding N idle scenes while people work, for a long time.

N idle scenes are held (100 per user) while E editors (20) type into one
document at a steady rate (5 edits/s each: 100 durable ops/s in all) and one
more user writes a preference about 7 times a second. The server's CPU (in
cores, from /proc utime+stime, which counts every thread that ever ran) and
resident memory are sampled every few seconds over the whole window (at
least 10 minutes in full mode). Reported: mean and max CPU and RSS, the
series itself, the edits' acknowledgement latency (p50/p99/max) and the
preference writes' (open loop: from their scheduled time).
"""
from __future__ import annotations

import os
import statistics
import time

from . import log, procs
from .loadgen import Generator, hold, release
from .workloads import settle, _ms, _row

EDITORS = 20
EDIT_RATE = 5.0      # per editor: 100 durable ops/s in all
PREF_RATE = 7.0      # preference writes per second, one user


def run_soak(ctx, system, n: int) -> dict:
    row = _row("soak", n, system)
    workdir = ctx.run_dir(f"soak-{system.name}-{n}")
    seconds, every, warmup = ctx.soak_seconds, ctx.soak_sample, ctx.soak_warmup
    limit = seconds + warmup + ctx.timeout
    running = system.start(ctx, workdir)
    samples: list[dict] = []
    docs_result = writes_result = None
    try:
        settle()
        base = procs.memory_kb(running.pid)
        gens, readies = (hold(ctx, system, running.port, n, workdir, timeout=limit) if n else ([], []))
        docs = Generator(["docs", "--protocol", system.protocol, "--port", str(running.port), "--n", str(EDITORS),
                          "--rate", f"{EDIT_RATE:g}", "--warmup-time", f"{warmup:g}", "--duration", f"{seconds:g}",
                          "--wait-go", "--quiet", "--timeout", str(limit), "--write-timeout", str(ctx.write_timeout),
                          *system.generator_args(ctx, "docs", EDITORS)], os.path.join(workdir, "docs.log"))
        writes = Generator(["writes", "--protocol", system.protocol, "--port", str(running.port), "--n", "1",
                            "--user", "soak-prefs", "--key-path", "bench", "--rate", f"{PREF_RATE:g}",
                            "--warmup-time", f"{warmup:g}", "--duration", f"{seconds:g}", "--wait-go", "--quiet",
                            "--timeout", str(limit), "--write-timeout", str(ctx.write_timeout)],
                           os.path.join(workdir, "writes.log"))
        if not (docs.wait("ready", ctx.timeout) and writes.wait("ready", ctx.timeout)):
            raise RuntimeError("the editors or the preference writer did not connect")
        docs.send("go")  # create and open the document
        if not docs.wait("opened", ctx.timeout):
            raise RuntimeError("the editors did not open the document")
        settle()
        held_rss = procs.memory_kb(running.pid)["rss_kb"]
        phase = procs.Phase()
        t0 = time.monotonic()
        docs.send("go")
        writes.send("go")
        last_t, last_cpu = t0, procs.cpu_seconds(running.pid)
        # Sample until both generators have reported (typing, then their last replies).
        while True:
            time.sleep(every)
            now, cpu, mem = time.monotonic(), procs.cpu_seconds(running.pid), procs.memory_kb(running.pid)
            samples.append({"t": round(now - t0, 2), "cores": round((cpu - last_cpu) / (now - last_t), 4),
                            "rss_kb": mem["rss_kb"]})
            last_t, last_cpu = now, cpu
            if running.proc.poll() is not None or now - t0 > limit:
                break
            if now - t0 >= seconds + warmup and not docs_result:
                docs_result = docs.finish(ctx.write_timeout + 10)
                writes_result = writes.finish(ctx.write_timeout + 10)
                break
        phase.end()
        alive = running.proc.poll() is None
        held = release(gens, readies)
    finally:
        procs.stop(running.proc)
    # The measured window only: from the end of warm-up to the end of typing.
    window = [s for s in samples if warmup < s["t"] <= seconds + warmup + every / 2] or samples
    cores = [s["cores"] for s in window]
    rss = [s["rss_kb"] for s in window]
    d, w = docs_result or {}, writes_result or {}
    connected = sum(r["ready"] for r in held if r) if n else 0
    server_s = sum(s["cores"] for s in samples) * every
    gen_s = (d.get("cpu_typing_s") or 0) + (w.get("cpu_write_s") or 0)
    row.update({
        "connected": connected, "seconds": seconds, "sample_every_s": every, "editors": EDITORS,
        "edit_rate": EDITORS * EDIT_RATE, "pref_rate": PREF_RATE,
        "cpu_cores": {"mean": round(statistics.fmean(cores), 4), "max": round(max(cores), 4),
                      "p50": round(statistics.median(cores), 4)} if cores else None,
        "rss_kb": {"base": base["rss_kb"], "held": held_rss, "mean": round(statistics.fmean(rss)),
                   "max": max(rss), "end": rss[-1]} if rss else None,
        "latency_ms": _ms(d.get("ack_ns")),           # edit acknowledgements
        "edit_to_last_ms": _ms(d.get("latency_last_ns")),
        "pref_ack_ms": _ms(w.get("ack_ns")),
        "ops_per_sec": d.get("ops_per_sec"), "pref_writes_per_sec": w.get("writes_per_sec"),
        "skipped": d.get("skipped"), "refused": (d.get("refused") or 0) + (w.get("refused") or 0),
        "lost": (d.get("lost") or 0) + (w.get("lost") or 0),
        "samples": samples,
        "cpu": {"server_s": round(server_s, 3), "generator_s": round(gen_s, 3),
                **phase.background(server_s, gen_s)},
        "generator": {"docs": d, "writes": w},
    })
    if not alive:
        row["status"], row["reason"] = "failed", "server exited"
    elif not docs_result or not writes_result:
        row["status"], row["reason"] = "failed", "an editor or the preference writer did not report"
    elif row["lost"] or row["refused"]:
        row["status"], row["reason"] = "partial", f"{row['lost']} lost, {row['refused']} refused"
    elif n and connected < n:
        row["status"], row["reason"] = "partial", f"server accepted {connected} of {n} idle scenes"
    c, m, lat = row["cpu_cores"] or {}, row["rss_kb"] or {}, row["latency_ms"] or {}
    log(f"  soak {seconds:g} s with {connected:,} idle: CPU mean {c.get('mean')} max {c.get('max')} cores, RSS mean "
        f"{(m.get('mean') or 0) / 1024:.0f} MiB max {(m.get('max') or 0) / 1024:.0f} MiB; edit ack p50 {lat.get('p50')} "
        f"p99 {lat.get('p99')} max {lat.get('max')} ms; {row['ops_per_sec']} ops/s")
    return row
