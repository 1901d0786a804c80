"""One table for every run: Markdown on stdout and in results.md, JSON beside it."""
from __future__ import annotations

import json
import os
from typing import Optional

# Rows measured while other processes used more than this many cores are marked †.
CONTENDED = 0.25

WORKLOAD_TEXT = {
    "connect": "connect: N idle connections; latency = one connection's connect (+ Panes `connect`)",
    "fanout": "fanout: 1 writer, N observers, one change at a time; latency = write until the LAST observer has it",
    "throughput": "throughput: as fanout with several changes in flight; changes/s sustained",
    "docsize": "docsize (issue 14): as docs, with 50 editors each attempting 100 edits/s (more than the server "
               "takes: sustained ops/s is its ceiling) into one document that starts with N bytes of text; "
               "durable (Panes) and the memory store beside it",
    "idle": "idle (issue 14): N idle connections (Panes: scenes, 100 per user) held and nothing happening; the "
            "server's CPU over the window in cores (schedstat, every thread), and its wake-ups (context "
            "switches) per second; *empty* = the same server before anyone connected",
    "connect-under-load": "connect-under-load (issue 14): with N idle held, one more connection at a time "
                          "(a new user's scene for Panes); server CPU from just before it until a short tail "
                          "after it is ready, minus the server's idle burn over the same time; latency = the "
                          "client's connect until ready",
    "acklat": "acklat (issue 14): durable `setPreference` writes from 10 writers (each its own user and key) "
              "on a fixed schedule of N writes/s in all (open loop); latency = from each write's *scheduled* "
              "time to its acknowledgement, so a stall is never hidden. N = max: each writer keeps 32 writes "
              "in flight (closed loop), and the acknowledged writes/s are the sustained ceiling",
    "prefwrite": "prefwrite (issue 13 item 9): one user's domain holds N keys; that user writes one key, one "
                 "write at a time; latency per write and the server's CPU per write",
    "soak": "soak (issue 14): N idle scenes held while 20 editors type into one document (100 durable ops/s "
            "in all) and one more user writes a preference ~7 times a second; the server's CPU and RSS "
            "sampled every few seconds over the window; edit acknowledgement latency",
    "cluster-fanout": "cluster-fanout (issue 11): as fanout (1 writer, N observers, one change at a time), the "
                      "writer on node 1 and observer i on node i mod K of a K-node cluster on one PostgreSQL "
                      "database; every delivery is also split into same-node (observer on node 1) and "
                      "cross-node (commit on node 1 → NOTIFY → the observer's node → observer). Per node: "
                      "changes/s ÷ K, CPU (/proc/PID/stat) per change and in cores over the measured phase; "
                      "PostgreSQL = every process of its cluster",
    "cluster-docs": "cluster-docs (issue 11): E editors (user editor-i, one scene each) each attempting 100 "
                    "edits/s, at most one unacknowledged, into one document (more than any server here takes: "
                    "sustained ops/s is the ceiling); editor i on node i mod K; durable acknowledgement (SQLite: "
                    "fsync; PostgreSQL: commit). Per node as cluster-fanout, per acknowledged edit",
    "cluster-failover": "cluster-failover (issue 27): N windows on node 1 of a 3-node cluster (haproxy in front, "
                        "round robin, `option redispatch 1`); node 1 killed with SIGKILL; every window "
                        "reconnects at once through haproxy (20 connects in flight) with its id and secret; "
                        "time from the kill until its connect is answered; resumed = same session, its "
                        "userInfo intact (`nodeLeaseMs` 5 s)",
    "storm": "storm (issue 27): N windows come back at once. Panes: N scenes (100 per user) connected and kept "
             "their sessions' identifiers and secrets; the server was restarted (SIGTERM, which drains, or kill -9) "
             "and loaded the N sessions; then every window sends a real `connect` with its session's identifier and "
             "secret (256 in flight), and must resume it (a new session counts as forked). Failover: the windows "
             "were on node 1 of two PostgreSQL nodes; node 1 is killed and they all resume through node 2. "
             "raw lws and nchan: the "
             "same N connect to a fresh server. *All back* = from the start until the last is answered; latency = "
             "one resume's TCP connect until its reply; server CPU (schedstat, every thread) per window, during the "
             "storm and with what it leaves for after (a settle: the store's writes); a normal client connected "
             "before the storm makes a round trip every 10 ms (Panes: a `ping` request; others: a WebSocket ping) "
             "and, on Panes, a durable `setPreference`: their latency during the storm (before it in brackets). "
             "KiB per scene = (RSS after − before the storm) ÷ resumed: the sessions were already loaded",
    "authflood": "authflood (issue 26): `--auth jwt`; one legitimate scene (from 127.0.0.1) pings 200 times a "
                 "second throughout, while phases of idle and of a flood from one other address alternate in "
                 "the same run: N forged RS256 tokens a second (a new connection each, signature 256 random "
                 "bytes), or ES256 at 348/700 of that rate. Ratio = a flood phase's ping p99 ÷ the mean p99 "
                 "of the idle phases on either side (goal: at most 1.5); rounds' median, and each round's",
    "docs": "docs (issue 5): E editors on one document, each attempting one edit (a one-character insert "
            "at a pseudo-random position) every 1/rate s, at most one unacknowledged at a time (a tick that "
            "finds the previous edit unacknowledged is *skipped*: the server's backpressure); latency = an "
            "edit's send until the LAST of the other E−1 editors has read it; ops/s = acknowledgements read "
            "in the measured window ÷ its length (min–max over its whole seconds)",
}


def _num(v: Optional[float], digits: int = 3) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def _lat(row: dict, key: str) -> Optional[float]:
    lat = row.get("latency_ms")
    return lat.get(key) if lat else None


def _mem(row: dict) -> Optional[float]:
    m = row.get("memory") or {}
    return m.get("per_conn_kb")


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    if a is None or b is None or b <= 0 or a <= 0:
        return "—"
    return f"{a / b:.2f}×"


def _measured(row: Optional[dict]) -> bool:
    return bool(row) and row["status"] in ("ok", "partial") and bool(row.get("latency_ms"))


def _docs_mem(row: dict, key: str) -> Optional[float]:
    return (row.get("memory") or {}).get(key)


def docs_table(rows: list[dict]) -> str:
    head = ("| E editors | system | connected | offered ops/s | sustained ops/s (min–max per s) | skipped ticks "
            "| → last editor: median ms | p99 ms | p99.9 ms | max ms | ack median · p99 ms "
            "| server KiB per open doc | KiB per editor | CPU server / generator s "
            "| Panes ÷ system: median · p99 · KiB/editor |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    panes = {r["n"]: r for r in rows if r["system"] == "panes"}
    for r in rows:
        if r["status"] in ("unavailable", "failed", "skipped") and not r.get("latency_ms"):
            lines.append(f"| {r['n']:,} | {r['label']} | {r['status']} ({r['reason']}) | | | | | | | | | | | | |")
            continue
        p = panes.get(r["n"])
        cpu = r.get("cpu") or {}
        if r["system"] == "panes":
            ratio = "1 (reference)"
        elif _measured(p):
            ratio = " · ".join([_ratio(_lat(p, "p50"), _lat(r, "p50")), _ratio(_lat(p, "p99"), _lat(r, "p99")),
                                _ratio(_docs_mem(p, "per_editor_kb"), _docs_mem(r, "per_editor_kb"))])
        else:
            ratio = "Panes n/a"
        connected = f"{r.get('connected', 0):,}"
        if r["status"] == "partial":
            connected += " ⚠"
        if (cpu.get("other_cores") or 0) > CONTENDED:
            connected += " †"
        ack = r.get("ack_ms") or {}
        skipped = r.get("skipped")
        share = r.get("skipped_share")
        skipped_text = "—" if skipped is None else f"{skipped:,}" + (f" ({share:.1%})" if skipped else "")
        doc_kb = _docs_mem(r, "doc_open_kb")
        lines.append(
            f"| {r['n']:,} | {r['label']} | {connected} | {_num(r.get('offered_ops_per_sec'))} "
            f"| {_num(r.get('ops_per_sec'))} ({_num(r.get('ops_per_second_min'))}–{_num(r.get('ops_per_second_max'))}) "
            f"| {skipped_text} | {_num(_lat(r, 'p50'))} | {_num(_lat(r, 'p99'))} | {_num(_lat(r, 'p99_9'))} "
            f"| {_num(_lat(r, 'max'))} | {_num(ack.get('p50'))} · {_num(ack.get('p99'))} "
            f"| {'(joined on connect)' if doc_kb is None and r['system'] == 'yjs' else _num(doc_kb)} "
            f"| {_num(_docs_mem(r, 'per_editor_kb'))} "
            f"| {_num(cpu.get('server_s'))} / {_num(cpu.get('generator_s'))} | {ratio} |")
    return "\n".join(lines)


def _same_loop_raw(row: dict, rows: list[dict], same_buffer: bool = False) -> Optional[dict]:
    """For a Panes row, the raw lws row with the same N on the same event loop: lws's default
    receive buffer, or (`same_buffer`) the one with Panes' receive buffer (`raw…-rx…`)."""
    if not row["system"].startswith("panes") or not row.get("event_loop"):
        return None
    return next((r for r in rows if r["system"].startswith("raw") and r["n"] == row["n"]
                 and ("-rx" in r["system"]) == same_buffer and r.get("event_loop") == row["event_loop"]), None)


def _bad(r: dict) -> bool:
    return r["status"] in ("unavailable", "failed", "skipped")


def _flags(r: dict) -> str:
    out = ""
    if r["status"] == "partial":
        out += " ⚠"
    if ((r.get("cpu") or {}).get("other_cores") or 0) > CONTENDED:
        out += " †"
    return out


def _failed_line(r: dict, first: str, cells: int) -> str:
    return f"| {first} | {r['label']} | {r['status']} ({r['reason']}) |" + " |" * (cells - 3)


def idle_table(rows: list[dict]) -> str:
    head = ("| N idle | system | connected | server CPU, cores | wake-ups/s | empty server: cores · wake-ups/s "
            "| server KiB/conn | Panes ÷ raw lws on the same loop | KiB/conn ÷ raw lws, same loop: "
            "lws's buffer · Panes' buffer |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 9))
            continue
        idle, empty = r.get("idle") or {}, r.get("empty") or {}
        raw = _same_loop_raw(r, rows)
        raw_cores = ((raw or {}).get("idle") or {}).get("cores")
        ratio = "" if not raw else "raw lws: 0" if raw_cores == 0 else _ratio(idle.get("cores"), raw_cores)
        same = _same_loop_raw(r, rows, same_buffer=True)
        memory = " · ".join(_ratio(_mem(r), _mem(x)) if x else "—" for x in (raw, same)) if raw or same else ""
        lines.append(f"| {r['n']:,} | {r['label']} | {r.get('connected', 0):,}{_flags(r)} | {_num(idle.get('cores'))} "
                     f"| {_num(idle.get('wakeups_per_sec'))} | {_num(empty.get('cores'))} · "
                     f"{_num(empty.get('wakeups_per_sec'))} | {_num(_mem(r))} | {ratio} | {memory} |")
    return "\n".join(lines)


def cul_table(rows: list[dict]) -> str:
    head = ("| N idle | system | connected | server CPU per connect, ms: median · p90 · max | CPU until ready, "
            "median ms | latency median · max ms | idle cores | Panes ÷ raw lws on the same loop (CPU median) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 8))
            continue
        c, t, lat = r.get("connect_cpu_ms") or {}, r.get("connect_cpu_to_reply_ms") or {}, r.get("latency_ms") or {}
        raw = _same_loop_raw(r, rows)
        ratio = _ratio(c.get("p50"), ((raw or {}).get("connect_cpu_ms") or {}).get("p50")) if raw else ""
        lines.append(f"| {r['n']:,} | {r['label']} | {r.get('connected', 0):,}{_flags(r)} "
                     f"| {_num(c.get('p50'))} · {_num(c.get('p90'))} · {_num(c.get('max'))} | {_num(t.get('p50'))} "
                     f"| {_num(lat.get('p50'))} · {_num(lat.get('max'))} | {_num((r.get('idle') or {}).get('cores'))} "
                     f"| {ratio} |")
    return "\n".join(lines)


def _rate(n: int) -> str:
    return "max (closed loop)" if n == 0 else f"{n:,}/s"


def acklat_table(rows: list[dict]) -> str:
    head = ("| offered | system | acknowledged writes/s (min–max per s) | p50 ms | p99 ms | p99.9 ms | max ms "
            "| p99 from send ms | latest send ms | server CPU per write ms | server cores |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in sorted(rows, key=lambda r: (r["n"] == 0, r["n"])):
        if _bad(r):
            lines.append(_failed_line(r, _rate(r["n"]), 11))
            continue
        cpu = r.get("cpu") or {}
        lines.append(f"| {_rate(r['n'])} | {r['label']}{_flags(r)} | {_num(r.get('writes_per_sec'))} "
                     f"({_num(r.get('writes_per_second_min'))}–{_num(r.get('writes_per_second_max'))}) "
                     f"| {_num(_lat(r, 'p50'))} | {_num(_lat(r, 'p99'))} | {_num(_lat(r, 'p99_9'))} "
                     f"| {_num(_lat(r, 'max'))} | {_num((r.get('ack_from_send_ms') or {}).get('p99'))} "
                     f"| {_num(r.get('max_send_late_ms'))} | {_num(cpu.get('server_ms_per_write'))} "
                     f"| {_num(cpu.get('server_cores'))} |")
    return "\n".join(lines)


def _bytes(n: int) -> str:
    return f"{n / 1e6:g} MB" if n >= 1e6 else f"{n / 1e3:g} kB" if n >= 1e3 else f"{n} B"


def docsize_table(rows: list[dict]) -> str:
    head = ("| document | system | editors | offered ops/s | sustained ops/s (min–max per s) | ack median · p99 ms "
            "| → last editor median · p99 ms | server CPU per op ms | server KiB per open doc (÷ text) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, _bytes(r["n"]), 9))
            continue
        ack, mem, cpu = r.get("ack_ms") or {}, r.get("memory") or {}, r.get("cpu") or {}
        per_text = mem.get("doc_open_per_text") if r["n"] >= 10000 else None  # a tiny text: no ratio
        lines.append(f"| {_bytes(r['n'])} | {r['label']} | {r.get('connected', 0)}{_flags(r)} "
                     f"| {_num(r.get('offered_ops_per_sec'))} | {_num(r.get('ops_per_sec'))} "
                     f"({_num(r.get('ops_per_second_min'))}–{_num(r.get('ops_per_second_max'))}) "
                     f"| {_num(ack.get('p50'))} · {_num(ack.get('p99'))} | {_num(_lat(r, 'p50'))} · "
                     f"{_num(_lat(r, 'p99'))} | {_num(cpu.get('server_ms_per_op'))} "
                     f"| {_num(mem.get('doc_open_kb'))}{f' ({per_text:g}×)' if per_text is not None else ''} |")
    return "\n".join(lines)


def _per_node(values: Optional[list], digits: int = 3) -> str:
    return " / ".join(_num(v, digits) for v in values) if values else "—"


def _cluster_cells(r: dict) -> str:
    """Per node: CPU in cores and CPU per op; PostgreSQL's cores and CPU per op."""
    c = r.get("cluster") or {}
    if not c:
        cpu = r.get("cpu") or {}
        return f"| — | {_num(cpu.get('server_ms_per_op'))} (1 node) | — | — |"
    return (f"| {_num(c.get('ops_per_sec_per_node'))} | {_per_node(c.get('node_ms_per_op'))} "
            f"(Σ {_num(c.get('server_ms_per_op'))}) | {_per_node(c.get('node_cores'))} "
            f"| {_num(c.get('postgres_cores'))} cores · {_num(c.get('postgres_ms_per_op'))} ms/op |")


def cluster_fanout_table(rows: list[dict]) -> str:
    head = ("| N observers | system | connected | → last observer median · p99 ms | every delivery median · p99 ms "
            "| same-node delivery median · p99 ms | cross-node delivery median · p99 ms | changes/s "
            "| changes/s per node | node CPU per change ms (each node) | node cores (each) | PostgreSQL "
            "| ÷ 1 node: median · p99 |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    base = {r["n"]: r for r in rows if r["system"] == "cluster-1"}
    for r in sorted(rows, key=lambda r: (r["n"], r["system"])):
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 13))
            continue
        b = base.get(r["n"])
        ratio = ("1 (baseline)" if r["system"] == "cluster-1" else
                 " · ".join([_ratio(_lat(r, "p50"), _lat(b, "p50")), _ratio(_lat(r, "p99"), _lat(b, "p99"))])
                 if _measured(b) else "—")
        each, same, cross = (r.get(k) or {} for k in ("each_latency_ms", "same_node_ms", "cross_node_ms"))
        lines.append(f"| {r['n']:,} | {r['label']} | {r.get('connected', 0):,}{_flags(r)} "
                     f"| {_num(_lat(r, 'p50'))} · {_num(_lat(r, 'p99'))} | {_num(each.get('p50'))} · {_num(each.get('p99'))} "
                     f"| {_num(same.get('p50'))} · {_num(same.get('p99'))} | {_num(cross.get('p50'))} · {_num(cross.get('p99'))} "
                     f"| {_num(r.get('changes_per_sec'))} {_cluster_cells(r)} {ratio} |")
    return "\n".join(lines)


def cluster_docs_table(rows: list[dict]) -> str:
    head = ("| E editors | system | connected | offered ops/s | sustained durable ops/s (min–max per s) "
            "| ack median · p99 ms | → last editor median · p99 ms | ops/s per node | node CPU per op ms (each node) "
            "| node cores (each) | PostgreSQL | ÷ SQLite (ops/s) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    sqlite = {r["n"]: r for r in rows if r["system"] == "panes"}
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 12))
            continue
        p = sqlite.get(r["n"])
        ratio = "1 (reference)" if r["system"] == "panes" else (
            _ratio(r.get("ops_per_sec"), p.get("ops_per_sec")) if p and p.get("ops_per_sec") else "—")
        ack = r.get("ack_ms") or {}
        lines.append(f"| {r['n']:,} | {r['label']} | {r.get('connected', 0):,}{_flags(r)} "
                     f"| {_num(r.get('offered_ops_per_sec'))} | {_num(r.get('ops_per_sec'))} "
                     f"({_num(r.get('ops_per_second_min'))}–{_num(r.get('ops_per_second_max'))}) "
                     f"| {_num(ack.get('p50'))} · {_num(ack.get('p99'))} | {_num(_lat(r, 'p50'))} · {_num(_lat(r, 'p99'))} "
                     f"{_cluster_cells(r)} {ratio} |")
    return "\n".join(lines)


def prefwrite_table(rows: list[dict]) -> str:
    head = ("| keys in the domain | system | writes/s, one at a time | latency p50 · p99 · max ms "
            "| server CPU per write ms | filling the domain took s | ÷ the fewest keys (CPU per write) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    least = {}
    for r in sorted(rows, key=lambda r: r["n"]):
        if not _bad(r):
            least.setdefault(r["system"], r)
    for r in sorted(rows, key=lambda r: (r["system"], r["n"])):
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 7))
            continue
        cpu = (r.get("cpu") or {}).get("server_ms_per_write")
        base = ((least.get(r["system"]) or {}).get("cpu") or {}).get("server_ms_per_write")
        lines.append(f"| {r['n']:,} | {r['label']}{_flags(r)} | {_num(r.get('writes_per_sec'))} "
                     f"| {_num(_lat(r, 'p50'))} · {_num(_lat(r, 'p99'))} · {_num(_lat(r, 'max'))} | {_num(cpu)} "
                     f"| {_num(r.get('fill_seconds'))} | {_ratio(cpu, base)} |")
    return "\n".join(lines)


def soak_table(rows: list[dict]) -> str:
    head = ("| N idle | system | minutes | CPU mean · max, cores | RSS mean · max MiB | edit ack p50 · p99 · max ms "
            "| preference ack p50 · p99 ms | edits/s · preferences/s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 8))
            continue
        c, m, p = r.get("cpu_cores") or {}, r.get("rss_kb") or {}, r.get("pref_ack_ms") or {}
        mib = lambda v: None if v is None else v / 1024  # noqa: E731
        lines.append(f"| {r['n']:,} | {r['label']}{_flags(r)} | {_num(r.get('seconds', 0) / 60)} "
                     f"| {_num(c.get('mean'))} · {_num(c.get('max'))} | {_num(mib(m.get('mean')))} · "
                     f"{_num(mib(m.get('max')))} | {_num(_lat(r, 'p50'))} · {_num(_lat(r, 'p99'))} · "
                     f"{_num(_lat(r, 'max'))} | {_num(p.get('p50'))} · {_num(p.get('p99'))} "
                     f"| {_num(r.get('ops_per_sec'))} · {_num(r.get('pref_writes_per_sec'))} |")
    return "\n".join(lines)


def storm_table(rows: list[dict]) -> str:
    head = ("| N windows | system | restart | back (forked, failed) | all back s | resume p50 · p99 ms "
            "| server CPU per window µs: storm · with after-work | normal round trip p50 · p99 ms (before) "
            "| normal durable write p50 · p99 ms (before) | start s | KiB per scene "
            "| ÷ nchan: all back | ÷ raw lws, same loop: CPU per window |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    nchan = {r["n"]: r for r in rows if r["system"] == "nchan" and not _bad(r)}
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 13))
            continue
        cpu, lat = r.get("cpu") or {}, r.get("latency_ms") or {}
        ping, ping0 = r.get("normal_ping_ms") or {}, r.get("normal_ping_before_ms") or {}
        write, write0 = r.get("normal_write_ms") or {}, r.get("normal_write_before_ms") or {}
        raw = _same_loop_raw(r, rows)
        n = nchan.get(r["n"])
        by_nchan = _ratio(r.get("storm_seconds"), n.get("storm_seconds")) if n and r["system"] != "nchan" else ""
        by_raw = _ratio(cpu.get("server_us_per_resume"), ((raw or {}).get("cpu") or {}).get("server_us_per_resume")) if raw else ""
        restart = {"drain": "SIGTERM (drain)", "kill": "kill -9", "failover": "node 1 kill -9"}.get(r.get("restart"), "—")
        lines.append(f"| {r['n']:,} | {r['label']} | {restart} | {r.get('resumed', 0):,} ({r.get('forked', 0)}, "
                     f"{r.get('failed', 0)}){_flags(r)} | {_num(r.get('storm_seconds'))} "
                     f"| {_num(lat.get('p50'))} · {_num(lat.get('p99'))} "
                     f"| {_num(cpu.get('storm_server_us_per_resume'))} · {_num(cpu.get('server_us_per_resume'))} "
                     f"| {_num(ping.get('p50'))} · {_num(ping.get('p99'))} ({_num(ping0.get('p50'))}) "
                     f"| {_num(write.get('p50'))} · {_num(write.get('p99'))} ({_num(write0.get('p50'))}) "
                     f"| {_num(r.get('start_seconds'))} | {_num(_mem(r))} | {by_nchan} | {by_raw} |")
    return "\n".join(lines)


def cluster_failover_table(rows: list[dict]) -> str:
    head = "| N windows | system | resumed | forked | unanswered | answered after the kill p50 · p99 · max ms | lease ms |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r) and not r.get("answered_ms"):
            lines.append(_failed_line(r, f"{r['n']:,}", 6))
            continue
        t = r.get("answered_ms") or {}
        lines.append(f"| {r['n']:,} | {r['label']} | {r.get('resumed', 0):,}{_flags(r)} | {r.get('forked', 0):,} "
                     f"| {r.get('unanswered', 0):,} | {_num(t.get('p50'))} · {_num(t.get('p99'))} · {_num(t.get('max'))} "
                     f"| {r.get('lease_ms')} |")
    return "\n".join(lines)


def authflood_table(rows: list[dict]) -> str:
    head = ("| RS256/s | system | ping p50 · p99 ms idle | flood | tokens/s sent | refused unchecked · checked "
            "| ping p50 · p99 ms flooded | p99 ÷ idle (rounds) | server cores idle · flooded |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if _bad(r):
            lines.append(_failed_line(r, f"{r['n']:,}", 8))
            continue
        for kind in ("rs256", "es256"):
            k = r.get(kind) or {}
            p = k.get("ping_ms") or {}
            rounds = ", ".join(f"{x:.2f}" for x in k.get("p99_ratios") or [])
            lines.append(f"| {r['n']:,} | {r['label']}{_flags(r)} | {_num(_lat(r, 'p50'))} · {_num(_lat(r, 'p99'))} "
                         f"| {kind.upper()} {_num(k.get('rate'))}/s | {_num(k.get('attempts_per_sec'))} "
                         f"| {k.get('limited', 0):,} · {k.get('checked', 0):,} | {_num(p.get('p50'))} · {_num(p.get('p99'))} "
                         f"| **{_num(k.get('p99_ratio'))}×** ({rounds}) | {_num(r.get('idle_server_cores'))} · "
                         f"{_num(k.get('server_cores'))} |")
    return "\n".join(lines)


SECTIONS = [
    # (workload, heading, table) in the order results.md shows them, after the peers' table
    ("docs", "docs: E editors typing into one document", docs_table),
    ("docsize", "docsize: 50 editors on a tiny and on a 1 MB document", docsize_table),
    ("idle", "idle: what N idle connections cost, nothing happening", idle_table),
    ("connect-under-load", "connect-under-load: one more connect with N idle held", cul_table),
    ("acklat", "acklat: durable write latency, open loop, and the sustained ceiling", acklat_table),
    ("prefwrite", "prefwrite: one preference write with few and many keys in the domain", prefwrite_table),
    ("soak", "soak: idle scenes held while people work", soak_table),
    ("cluster-fanout", "cluster-fanout: one writer on node 1, N observers over 1, 2 and 3 nodes", cluster_fanout_table),
    ("cluster-docs", "cluster-docs: one hot document, editors over 2 nodes vs 1 node vs SQLite", cluster_docs_table),
    ("cluster-failover", "cluster-failover: windows of a node killed with SIGKILL, back through haproxy",
     cluster_failover_table),
    ("storm", "storm: every window back at once after a restart", storm_table),
    ("authflood", "authflood: a legitimate scene's ping while one address floods forged tokens", authflood_table),
]
PEER_WORKLOADS = ("connect", "fanout", "throughput")


def table(rows: list[dict]) -> str:
    head = ("| workload | N | system | connected | median ms | p99 ms | p99.9 ms | max ms | all connected s "
            "| changes/s | server KiB/conn | CPU server / generator s | Panes ÷ system: median · p99 · KiB/conn |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    panes = {(r["workload"], r["n"]): r for r in rows if r["system"] == "panes"}
    for r in rows:
        p = panes.get((r["workload"], r["n"]))
        if r["status"] in ("unavailable", "failed", "skipped") and not r.get("latency_ms"):
            lines.append(f"| {r['workload']} | {r['n']:,} | {r['label']} | {r['status']} ({r['reason']}) "
                         "| | | | | | | | | |")
            continue
        cpu = r.get("cpu") or {}
        if r["system"] == "panes":
            ratio = "1 (reference)"
        elif _measured(p):
            ratio = " · ".join([_ratio(_lat(p, "p50"), _lat(r, "p50")), _ratio(_lat(p, "p99"), _lat(r, "p99")),
                                _ratio(_mem(p), _mem(r))])
        else:
            ratio = "Panes n/a"
        connected = f"{r.get('connected', 0):,}"
        if r["status"] == "partial":
            connected += " ⚠"
        if (cpu.get("other_cores") or 0) > CONTENDED:
            connected += " †"
        lines.append(
            f"| {r['workload']} | {r['n']:,} | {r['label']} | {connected} | {_num(_lat(r, 'p50'))} "
            f"| {_num(_lat(r, 'p99'))} | {_num(_lat(r, 'p99_9'))} | {_num(_lat(r, 'max'))} "
            f"| {_num(r.get('connect_seconds'))} | {_num(r.get('changes_per_sec'))} | {_num(_mem(r))} "
            f"| {_num(cpu.get('server_s'))} / {_num(cpu.get('generator_s'))} | {ratio} |")
    return "\n".join(lines)


def footnotes(rows: list[dict], systems: dict, meta: dict) -> str:
    used = []
    for r in rows:
        if r["system"] not in used:
            used.append(r["system"])
    out = ["Ratios are Panes ÷ system, for latency and memory alike: **below 1 means Panes is "
           "better** (faster, smaller); above 1, the other system is. ⚠ = not every connection or "
           "change made it (see the reason in results.json). † = other processes on the machine used "
           f"more than {CONTENDED:g} of a core while this row was measured (`other_cores` in "
           "results.json): treat it with care.", ""]
    for w in dict.fromkeys(r["workload"] for r in rows):
        out.append(f"- {WORKLOAD_TEXT.get(w, w)}")
    if any(r["workload"] in PEER_WORKLOADS for r in rows):
        out += [
            f"- Same machine, same run, same N and number of changes for every system; payload "
            f"{meta['payload']} bytes of application data per change (a JSON value for Panes, raw and "
            f"nchan; {meta['payload']} inserted characters in a Yjs update for y-websocket).",
            "- Memory = the server's VmRSS with N connected minus VmRSS before, over N. CPU = the server's "
            "utime+stime and the generator's own, over the same phase (connecting for connect rows, "
            "measuring for the others); the generator must cost less than the server it measures.",
        ]
    if any(r["workload"] in ("docs", "docsize") for r in rows):
        d = (meta.get("plan") or {}).get("docs") or {}
        out += [
            f"- docs: {d.get('rate_per_editor', '?'):g} edits/s per editor, {d.get('warmup_s', '?'):g} s "
            f"warm-up, {d.get('measure_s', '?'):g} s measured, then at most the write timeout for the last "
            "edits. Panes: editor i is user editor-i, one scene each, in one workspace; the document is "
            "created empty by the first and opened by all. Memory: *per open doc* = VmRSS with the "
            "document open by all E minus VmRSS with E connected and nothing open; *per editor* = (VmRSS "
            "with the document open − VmRSS before anyone connected) ÷ E: a connection and its share of "
            "the document. Growth while typing (text and operation log) is `typing_growth_kb` in "
            "results.json. CPU = server and generator over the typing phase (warm-up, window, drain). "
            "Every reply with ok:false is counted (`refused`); a row with any is marked ⚠.",
        ]
    out += [
        "- Every server is single-threaded on one event loop; the generator (panes-load, one process, "
        "epoll) runs beside it on the other core. A process may hold 20,000 files: past that, "
        "connections are spread over several generator processes with their own source addresses, "
        "and a server reports what it accepted.",
    ]
    for name in used:
        s = systems.get(name)
        if s:
            out.append(f"- **{s.label}**: {s.note}")
    return "\n".join(out)


def tables(rows: list[dict], level: str = "##") -> str:
    """Every table for `rows`: the peers' (connect, fan-out, throughput), then one per other workload."""
    text = ""
    peers = [r for r in rows if r["workload"] in PEER_WORKLOADS]
    if peers:
        text += table(peers) + "\n\n"
    for workload, heading, draw in SECTIONS:
        mine = [r for r in rows if r["workload"] == workload]
        if mine:
            text += f"{level} {heading}\n\n" + draw(mine) + "\n\n"
    return text


def write(out_dir: str, rows: list[dict], systems: dict, meta: dict) -> str:
    os.makedirs(out_dir, exist_ok=True)
    text = f"# Panes benchmark ({meta['mode']}, {meta['started']})\n\n" + tables(rows) + footnotes(rows, systems, meta) + "\n"
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=2)
    return text
