"""The results as a page: SVG plots drawn by svg.py and an index.md with them and the tables.

`write` draws one run into its bench-results/<time>/ folder. `publish` merges
a run into docs/bench/ (the committed "latest results" docs/benchmarks.md and the README link to):
each (workload, N, system) row of the run replaces the same row there, every
other row is kept with the date of the run it came from, and the page is
drawn again from the merged rows.
"""
from __future__ import annotations

import json
import os
from typing import Callable, Optional

from . import ROOT, report, svg

PUBLISHED = os.path.join(ROOT, "docs", "bench")
ORDER = ["panes", "panes-poll", "panes-libev", "panes-pg", "panes-mem", "raw", "raw-libev", "nchan", "yjs",
         "panes-mem-libev", "panes-mem-poll", "cluster-1", "cluster-2", "cluster-3", "raw-rx2k", "raw-libev-rx2k"]


def _colour(system: str) -> str:
    return svg.colour(ORDER.index(system) if system in ORDER else len(ORDER) + hash(system) % 5)


def _ok(r: dict) -> bool:
    return r["status"] in ("ok", "partial")


def _systems(rows: list[dict]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for r in sorted(rows, key=lambda r: ORDER.index(r["system"]) if r["system"] in ORDER else 99):
        seen.setdefault(r["system"], r["label"])
    return list(seen.items())


def _lines(rows: list[dict], workload: str, x: Callable[[dict], float], value: Callable[[dict], Optional[float]],
           name: str = "", dashed: bool = False) -> list:
    out = []
    for system, label in _systems([r for r in rows if r["workload"] == workload and _ok(r)]):
        pts = [(x(r), value(r)) for r in rows if r["workload"] == workload and r["system"] == system and _ok(r)]
        pts = [(a, b) for a, b in pts if b is not None]
        if pts:
            out.append((f"{label}{name}", pts, _colour(system), dashed))
    return out


def _bars(rows: list[dict], workload: str, value: Callable[[dict], Optional[float]],
          category: Callable[[int], str]) -> tuple[list[str], list]:
    mine = [r for r in rows if r["workload"] == workload and _ok(r)]
    ns = sorted({r["n"] for r in mine}, key=lambda n: (n == 0, n))
    series = []
    for system, label in _systems(mine):
        by_n = {r["n"]: value(r) for r in mine if r["system"] == system}
        series.append((label, [by_n.get(n) for n in ns], _colour(system)))
    return [category(n) for n in ns], series


def _get(*path):
    def f(r):
        v = r
        for k in path:
            v = (v or {}).get(k)
        return v
    return f


def _n(n: int) -> str:
    return f"{n:,}"


def plots(rows: list[dict]) -> dict[str, str]:
    """name -> SVG text, for the workloads present in `rows`."""
    out: dict[str, Optional[str]] = {}
    n = lambda r: r["n"]  # noqa: E731
    if any(r["workload"] == "fanout" for r in rows):
        out["fanout"] = svg.line_chart(
            "Fan-out: one change to N observers (lower is better)", "observers N", "write → last observer (ms)",
            _lines(rows, "fanout", n, _get("latency_ms", "p50"), " median")
            + _lines(rows, "fanout", n, _get("latency_ms", "p99"), " p99", dashed=True), logx=True, logy=True)
    if any(r["workload"] == "connect" for r in rows):
        out["memory"] = svg.line_chart(
            "Server memory per idle connection (lower is better)", "connections held", "KiB per connection",
            _lines(rows, "connect", lambda r: r.get("connected") or r["n"], _get("memory", "per_conn_kb")),
            logx=True)
    if any(r["workload"] == "docs" for r in rows):
        out["docs"] = svg.line_chart(
            "Document edits: send → last other editor (lower is better)", "editors E on one document",
            "latency (ms)", _lines(rows, "docs", n, _get("latency_ms", "p50"), " median")
            + _lines(rows, "docs", n, _get("latency_ms", "p99"), " p99", dashed=True), logx=True, logy=True)
    if any(r["workload"] == "docsize" for r in rows):
        cats, series = _bars(rows, "docsize", _get("ops_per_sec"), report._bytes)
        out["docsize"] = svg.bar_chart("One document, 50 editors: edits sustained (higher is better)",
                                       "acknowledged edits per second", cats, series,
                                       subtitle="document size at the start", goal=(5000, "goal 5,000/s (1 MB)"))
        cats, series = _bars(rows, "docsize", _get("ack_ms", "p99"), report._bytes)
        out["docsize-ack"] = svg.bar_chart("One document, 50 editors: edit acknowledgement p99 (lower is better)",
                                           "ms", cats, series, logy=True, goal=(20, "goal 20 ms"))
    if any(r["workload"] == "idle" for r in rows):
        cats, series = _bars(rows, "idle", _get("idle", "cores"), lambda n: f"{n:,} idle")
        out["idle"] = svg.bar_chart("Server CPU with N idle connections, nothing happening (lower is better)",
                                    "cores", cats, series, goal=(0.01, "goal 0.01 core"))
    if any(r["workload"] == "connect-under-load" for r in rows):
        cats, series = _bars(rows, "connect-under-load", _get("connect_cpu_ms", "p50"), lambda n: f"{n:,} idle held")
        out["connect-under-load"] = svg.bar_chart("Server CPU for one more connect (median; lower is better)",
                                                  "ms of CPU", cats, series, logy=True)
    if any(r["workload"] == "acklat" for r in rows):
        mine = sorted([r for r in rows if r["workload"] == "acklat" and _ok(r)], key=lambda r: (r["n"] == 0, r["n"]))
        cats = [f"{report._rate(r['n'])}\n{r['label']}" for r in mine]
        series = [(k, [(r.get("latency_ms") or {}).get(key) for r in mine], svg.colour(i))
                  for i, (k, key) in enumerate([("p50", "p50"), ("p99", "p99"), ("p99.9", "p99_9"), ("max", "max")])]
        out["acklat"] = svg.bar_chart("Durable write acknowledgement, from the scheduled time (lower is better)",
                                      "ms", cats, series, logy=True, goal=(5, "goal p99 5 ms at 1k/s"))
    if any(r["workload"] == "prefwrite" for r in rows):
        cats, series = _bars(rows, "prefwrite", _get("cpu", "server_ms_per_write"), lambda n: f"{n:,} keys")
        out["prefwrite"] = svg.bar_chart("One preference write: server CPU by keys in the domain (lower is better)",
                                         "ms of CPU per write", cats, series, logy=True)
    if any(r["workload"] == "cluster-fanout" for r in rows):
        mine = sorted([r for r in rows if r["workload"] == "cluster-fanout" and _ok(r)],
                      key=lambda r: (r["n"], r["system"]))
        cats = [f"{r['n']:,} observers\n{r['label']}" for r in mine]
        series = [(k, [_get(*path)(r) for r in mine], svg.colour(i)) for i, (k, path) in enumerate([
            ("last observer median", ("latency_ms", "p50")), ("last observer p99", ("latency_ms", "p99")),
            ("same-node p99", ("same_node_ms", "p99")), ("cross-node p99", ("cross_node_ms", "p99"))])]
        out["cluster-fanout"] = svg.bar_chart("Cluster fan-out: observers over 1, 2, 3 nodes (lower is better)",
                                              "ms", cats, series, logy=True)
    if any(r["workload"] == "cluster-docs" for r in rows):
        cats, series = _bars(rows, "cluster-docs", _get("ops_per_sec"), lambda n: f"{n:,} editors, one document")
        out["cluster-docs"] = svg.bar_chart("One hot document: durable edits sustained (higher is better)",
                                            "acknowledged edits per second", cats, series)
    soak = [r for r in rows if r["workload"] == "soak" and _ok(r) and r.get("samples")]
    if soak:
        cpu = [(f"{r['label']}, {r['n']:,} idle", [(s["t"], s["cores"]) for s in r["samples"]], _colour(r["system"]),
                i % 2 == 1) for i, r in enumerate(soak)]
        out["soak"] = svg.line_chart("Soak: server CPU while people work beside N idle scenes", "seconds",
                                     "cores", cpu, subtitle="20 editors at 100 ops/s in all, ~7 preference writes/s")
        rss = [(label, [(t, None if v is None else v) for t, v in
                        [(s["t"], s["rss_kb"] / 1024) for s in r["samples"]]], c, d)
               for (label, _, c, d), r in zip(cpu, soak)]
        out["soak-rss"] = svg.line_chart("Soak: server resident memory", "seconds", "MiB", rss)
    return {k: v for k, v in out.items() if v}


def _index(rows: list[dict], systems: dict, meta: dict, drawn: list[str], runs: Optional[list[dict]] = None) -> str:
    text = "# Panes benchmark results\n\n"
    if runs:
        text += ("The latest published rows of `scripts/bench --publish`, each from the run named in "
                 "`results.json`; runs merged here:\n\n")
        for run in runs:
            text += f"- {run['started']} ({run['mode']} run of `{run['command']}`, Panes {run.get('panes_git') or '?'})\n"
        text += "\n"
    else:
        text += f"{meta['mode']} run of `{meta['command']}`, {meta['started']}.\n\n"
    text += ("On a 2-core machine shared with other work, runs vary by up to 2×: read ratios and "
             "orders of magnitude, not the last digit. How each number is taken: "
             "[bench/README.md](../../bench/README.md).\n\n")
    for name in drawn:
        text += f"![{name}]({name}.svg)\n"
    text += "\n" + report.tables(rows) + report.footnotes(rows, systems, meta) + "\n"
    return text


def write(out_dir: str, rows: list[dict], systems: dict, meta: dict) -> list[str]:
    drawn = plots(rows)
    for name, text in drawn.items():
        with open(os.path.join(out_dir, f"{name}.svg"), "w") as f:
            f.write(text)
    with open(os.path.join(out_dir, "index.md"), "w") as f:
        f.write(_index(rows, systems, meta, list(drawn)))  # bench-results/<time>/ is as deep as docs/bench/
    return list(drawn)


SLIM = ("generator", "opened", "filled", "repeats")


def publish(rows: list[dict], systems: dict, meta: dict, where: str = PUBLISHED) -> str:
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, "results.json")
    old: dict = {"runs": [], "rows": []}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    run = {"started": meta["started"], "mode": meta["mode"], "command": meta["command"],
           "panes_git": (meta.get("versions") or {}).get("panes_git"), "machine": meta.get("machine"),
           "server_args": meta.get("server_args"), "plan": meta.get("plan")}
    fresh = [{k: v for k, v in r.items() if k not in SLIM} | {"run": meta["started"]} for r in rows]
    keys = {(r["workload"], r["n"], r["system"]) for r in fresh}
    kept = [r for r in old["rows"] if (r["workload"], r["n"], r["system"]) not in keys]
    merged = kept + fresh
    used = {r.get("run") for r in merged}
    runs = [x for x in old["runs"] if x["started"] in used and x["started"] != run["started"]] + [run]
    order = {w: i for i, w in enumerate(["connect", "fanout", "throughput", "docs", "docsize", "idle",
                                         "connect-under-load", "acklat", "prefwrite", "soak",
                                         "cluster-fanout", "cluster-docs"])}
    merged.sort(key=lambda r: (order.get(r["workload"], 99), r["n"] == 0 and r["workload"] == "acklat", r["n"],
                               ORDER.index(r["system"]) if r["system"] in ORDER else 99))
    with open(path, "w") as f:
        json.dump({"runs": runs, "rows": merged}, f, indent=1)
    drawn = plots(merged)
    for name in os.listdir(where):
        if name.endswith(".svg") and name[:-4] not in drawn:
            os.remove(os.path.join(where, name))
    for name, text in drawn.items():
        with open(os.path.join(where, f"{name}.svg"), "w") as f:
            f.write(text)
    # The footnotes describe the plan of the newest run; older rows name their own run.
    with open(os.path.join(where, "README.md"), "w") as f:
        f.write(_index(merged, systems, meta, list(drawn), runs))
    return where
