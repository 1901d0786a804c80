"""The workloads: each run starts one system fresh, measures, and stops it.

- connect: N idle connections (Panes: scenes); time to connect them all, the
  connect latency of each, and the server's resident memory per connection.
- fanout: one writer, N observers; each change is written once the previous
  one has reached every observer. Latency = write -> the LAST observer has it.
- throughput: as fanout, with several changes in flight: changes/s sustained.
- docs (issue 5): E editors typing into one document at a steady rate; ops/s
  sustained, latency = an edit's send -> the LAST other editor has it, and the
  server's memory per open document.
- docsize (issue 14): the same with 50 editors as fast as the server lets them,
  into a document that starts tiny or 1 MB long.

The rows of issue 14 are in idle.py (idle, connect-under-load), writes.py
(acklat, prefwrite) and soak.py.

Memory per connection = (VmRSS with N connected - VmRSS before) / connected.
CPU = utime + stime from /proc for the server, and the generator's own
getrusage, over the same phase (connecting, or measuring).
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Optional

from . import log, procs
from .loadgen import Generator, hold, release

SETTLE = 0.5  # seconds for a server to settle before its memory is read (the smoke run: less)


def settle() -> None:
    time.sleep(SETTLE)


def measuring(ctx, pid: int):
    """Around a row's measured phase: `ctx.measure_hook(pid)` if set (profile: perf record), else nothing."""
    hook = getattr(ctx, "measure_hook", None)
    return hook(pid) if hook else contextlib.nullcontext()


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
        settle()
        base, cpu0 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        phase = procs.Phase()
        gens, readies = hold(ctx, system, running.port, n, workdir, name="load")
        settle()
        mem, cpu1 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        phase.end()
        alive = running.proc.poll() is None
        results = release(gens, readies)
    finally:
        procs.stop(running.proc)

    got = [r for r in results if r]
    connected = sum(r["ready"] for r in got)
    gen_cpu = round(sum(r.get("cpu_connect_s", 0) for r in got), 3)
    row.update({
        "processes": len(gens),
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
        settle()
        base, cpu0 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        args = ["fanout", "--protocol", system.protocol, "--port", str(running.port),
                "--n", str(n), "--writes", str(writes), "--warmup", str(warmup),
                "--inflight", str(inflight), "--payload", str(ctx.payload), "--wait-go", "--quiet",
                "--timeout", str(ctx.timeout), "--write-timeout", str(ctx.write_timeout),
                *running.generator_args, *system.generator_args(ctx, workload, n)]
        gen = Generator(args, os.path.join(workdir, "load.log"))
        ready = gen.wait("ready", ctx.timeout)
        settle()
        mem, cpu1, snap1 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid), running.snapshot()
        phase = procs.Phase()
        with measuring(ctx, running.pid):
            gen.send("go")
            result = gen.finish(ctx.timeout)
        cpu2, snap2 = procs.cpu_seconds(running.pid), running.snapshot()
        phase.end()
        alive = running.alive()
    finally:
        running.stop()

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
    cluster = running.describe(snap1, snap2, r.get("completed") or 0, phase.wall or 0)
    if cluster:
        row["cluster"] = cluster
        row["same_node_ms"] = _ms(r.get("latency_same_node_ns"))
        row["cross_node_ms"] = _ms(r.get("latency_cross_node_ns"))
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


def run_docsize(ctx, system, doc_bytes: int) -> dict:
    """docsize: `ctx.docsize_editors` editors typing as fast as the server lets them into one
    document that starts `doc_bytes` long (issue 14: a 1 MB document and a tiny one)."""
    return run_docs(ctx, system, ctx.docsize_editors, workload="docsize", doc_bytes=doc_bytes,
                    rate=ctx.docsize_rate, seconds=ctx.docsize_seconds, n=doc_bytes)


def run_docs(ctx, system, editors: int, *, workload: str = "docs", doc_bytes: int = 0,
             rate: Optional[float] = None, seconds: Optional[float] = None, n: Optional[int] = None) -> dict:
    """E editors, one document, each typing `rate` (default `ctx.docs_rate`) edits a second.

    Memory is read four times: before anyone connects, with E editors connected,
    with the document open by all of them, and after typing. Per open document =
    opened - connected; per editor = (opened - before) / E, i.e. a connection and
    its share of the open document. CPU is over the typing phase (warm-up,
    measured window and the last edits' arrival) for server and generator alike.
    """
    rate = rate or ctx.docs_rate
    seconds = seconds or ctx.docs_seconds
    n = editors if n is None else n
    row = _row(workload, n, system)
    if system.protocol == "yjs" and not ctx.yjs_editor_updates.get(editors):
        row["status"], row["reason"] = "unavailable", "no prepared Yjs updates for the editors"
        return row
    workdir = ctx.run_dir(f"{workload}-{system.name}-{n}")
    running = system.start(ctx, workdir)
    opened = None
    mem_connected = mem_opened = mem_end = None
    try:
        settle()
        base, cpu0 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
        args = ["docs", "--protocol", system.protocol, "--port", str(running.port), "--n", str(editors),
                "--rate", f"{rate:g}", "--warmup-time", f"{ctx.docs_warmup:g}",
                "--duration", f"{seconds:g}", "--doc-bytes", str(doc_bytes), "--wait-go", "--quiet",
                "--timeout", str(ctx.timeout), "--write-timeout", str(ctx.write_timeout),
                *running.generator_args, *system.generator_args(ctx, "docs", editors)]
        gen = Generator(args, os.path.join(workdir, "load.log"))
        ready = gen.wait("ready", ctx.timeout)
        cpu1 = cpu2 = cpu3 = procs.cpu_seconds(running.pid)
        snap2 = snap3 = running.snapshot()
        phase = procs.Phase()
        if ready:
            settle()
            mem_connected, cpu1 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
            gen.send("go")  # create the document, everyone opens it
            opened = gen.wait("opened", ctx.timeout)
        if opened:
            settle()
            mem_opened, cpu2 = procs.memory_kb(running.pid), procs.cpu_seconds(running.pid)
            snap2 = running.snapshot()
            phase = procs.Phase()
            gen.send("go")  # type
        result = gen.finish(ctx.timeout)
        cpu3, snap3 = procs.cpu_seconds(running.pid), running.snapshot()
        phase.end()
        mem_end = procs.memory_kb(running.pid)
        alive = running.alive()
    finally:
        running.stop()

    r = result or ready or {}
    connected = r.get("ready", 0)
    memory = {"base_rss_kb": base["rss_kb"]}
    if mem_connected:
        memory |= {"connected_rss_kb": mem_connected["rss_kb"],
                   "per_conn_kb": round((mem_connected["rss_kb"] - base["rss_kb"]) / connected, 2)
                   if connected else None}
    if mem_opened and mem_connected:
        doc_kb = mem_opened["rss_kb"] - mem_connected["rss_kb"]
        memory |= {"opened_rss_kb": mem_opened["rss_kb"],
                   # y-websocket: a client is in its document from the moment it connects
                   "doc_open_kb": doc_kb if system.separate_open else None,
                   "per_editor_kb": round((mem_opened["rss_kb"] - base["rss_kb"]) / connected, 2)
                   if connected else None}
    if mem_end and mem_opened:
        memory |= {"end_rss_kb": mem_end["rss_kb"], "hwm_kb": mem_end["hwm_kb"],
                   "typing_growth_kb": mem_end["rss_kb"] - mem_opened["rss_kb"]}
    gen_cpu = r.get("cpu_typing_s")
    acks = r.get("acked") or 0
    if mem_opened and mem_connected and doc_bytes:
        memory["doc_open_per_text"] = round((mem_opened["rss_kb"] - mem_connected["rss_kb"]) * 1024 / doc_bytes, 2)
    row.update({
        "connected": connected,
        "failed": r.get("failed", editors),
        "editors": editors,
        "connect_seconds": r.get("connect_seconds"),
        "open_seconds": (opened or {}).get("open_seconds"),
        "rate_per_editor": rate, "warmup_s": ctx.docs_warmup, "measure_s": seconds, "doc_bytes": doc_bytes,
        "latency_ms": _ms(r.get("latency_last_ns")),
        "each_latency_ms": _ms(r.get("latency_each_ns")),
        "ack_ms": _ms(r.get("ack_ns")),
        "open_ms": _ms((opened or {}).get("open_ns")),
        "offered_ops_per_sec": r.get("offered_ops_per_sec"),
        "ops_per_sec": r.get("ops_per_sec"),
        "ops_per_second_min": r.get("ops_per_second_min"),
        "ops_per_second_max": r.get("ops_per_second_max"),
        "offered": r.get("offered"), "skipped": r.get("skipped"), "skipped_share": r.get("skipped_share"),
        "lost": r.get("lost"), "unacked": r.get("unacked"),
        "refused": r.get("refused"), "refused_edits": r.get("refused_edits"),
        "open_retries": r.get("open_retries"),
        "editors_behind_by_node": r.get("editors_behind_by_node"), "unacked_by_node": r.get("unacked_by_node"),
        "lowest_revision_by_node": r.get("lowest_revision_by_node"),
        "final_revision": r.get("final_revision"), "editors_behind": r.get("editors_behind"),
        "memory": memory,
        "cpu": {"server_s": round(cpu3 - cpu2, 3), "generator_s": gen_cpu,
                **phase.background(cpu3 - cpu2, gen_cpu),
                "server_ms_per_op": round((cpu3 - cpu2) * 1000 / acks, 3) if acks else None,
                "connect_server_s": round(cpu1 - cpu0, 3), "connect_generator_s": r.get("cpu_connect_s"),
                "open_server_s": round(cpu2 - cpu1, 3), "open_generator_s": (opened or {}).get("cpu_open_s")},
        "generator": r,
        "opened": opened,
    })
    cluster = running.describe(snap2, snap3, acks, phase.wall or 0)
    if cluster:
        row["cluster"] = cluster
    problems = []
    if r.get("refused"):
        problems.append(f"{r['refused']} requests refused by the server (ok:false; "
                        f"{r.get('refused_edits', 0)} edits): {r.get('first_error', '')}")
    if r.get("lost") or r.get("unacked"):
        problems.append(f"{r.get('lost', 0)} edits did not reach every editor and {r.get('unacked', 0)} were "
                        f"not acknowledged within {ctx.write_timeout:g} s")
    if r.get("editors_behind"):
        problems.append(f"{r['editors_behind']} editors ended on another revision than the last")
    if not result:
        row["status"], row["reason"] = "failed", ("server exited" if not alive else "no result from panes-load")
    elif not row["latency_ms"]:
        row["status"] = "unavailable"
        row["reason"] = r.get("first_error") or "no edit reached every other editor"
    elif problems:
        row["status"], row["reason"] = "partial", "; ".join(problems)
    elif connected < editors:
        row["status"] = "partial"
        row["reason"] = f"only {connected} of {editors} editors connected: {r.get('first_error', '')}"
    if row["status"] != "ok":
        log(f"  {system.label}: {row['status']}: {row['reason']}")
    return row
