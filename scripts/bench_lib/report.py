"""One table for every run: Markdown on stdout and in results.md, JSON beside it."""
from __future__ import annotations

import json
import os
import subprocess
from typing import Optional

from . import ROOT, log

# Rows measured while other processes used more than this many cores are marked †.
CONTENDED = 0.25

WORKLOAD_TEXT = {
    "connect": "connect: N idle connections; latency = one connection's connect (+ Panes `connect`)",
    "fanout": "fanout: 1 writer, N observers, one change at a time; latency = write until the LAST observer has it",
    "throughput": "throughput: as fanout with several changes in flight; changes/s sustained",
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
    if any(r["workload"] != "docs" for r in rows):
        out += [
            f"- Same machine, same run, same N and number of changes for every system; payload "
            f"{meta['payload']} bytes of application data per change (a JSON value for Panes, raw and "
            f"nchan; {meta['payload']} inserted characters in a Yjs update for y-websocket).",
            "- Memory = the server's VmRSS with N connected minus VmRSS before, over N. CPU = the server's "
            "utime+stime and the generator's own, over the same phase (connecting for connect rows, "
            "measuring for the others); the generator must cost less than the server it measures.",
        ]
    if any(r["workload"] == "docs" for r in rows):
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


def write(out_dir: str, rows: list[dict], systems: dict, meta: dict) -> str:
    os.makedirs(out_dir, exist_ok=True)
    text = f"# Panes benchmark ({meta['mode']}, {meta['started']})\n\n"
    others = [r for r in rows if r["workload"] != "docs"]
    docs = [r for r in rows if r["workload"] == "docs"]
    if others:
        text += table(others) + "\n\n"
    if docs:
        text += "## docs: E editors typing into one document\n\n" + docs_table(docs) + "\n\n"
    text += footnotes(rows, systems, meta) + "\n"
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=2)
    return text


def plot(out_dir: str) -> Optional[str]:
    """latency.png through Debian's python3 (where python3-matplotlib lives); None or why not."""
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        return "no /usr/bin/python3"
    r = subprocess.run([py, os.path.join(ROOT, "scripts", "bench_lib", "plot.py"),
                        os.path.join(out_dir, "results.json"), os.path.join(out_dir, "latency.png")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["plot failed"])[-1]
    return None
