"""latency.png from results.json: run with Debian's /usr/bin/python3 and python3-matplotlib.

Usage: plot.py results.json latency.png
Fan-out: change latency (write -> last observer) against N, median solid and
p99 dashed, per system; server memory per connection against N. docs: edit
latency (send -> last other editor) against E; edits per second sustained and
offered against E. Only the panels for workloads that were run.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(rows, workload, value, x=lambda r: r["n"]):
    out = {}
    for r in rows:
        if r["workload"] != workload or r["status"] not in ("ok", "partial"):
            continue
        v = value(r)
        if v is not None:
            out.setdefault(r["label"], []).append((x(r), v))
    return {k: sorted(v) for k, v in out.items()}


def latency_panel(ax, rows, workload, xlabel, title, ylabel):
    colours = {}
    for label, pts in series(rows, workload, lambda r: (r.get("latency_ms") or {}).get("p50")).items():
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{label} median")
        colours[label] = line.get_color()
    for label, pts in series(rows, workload, lambda r: (r.get("latency_ms") or {}).get("p99")).items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="x", linestyle="--",
                color=colours.get(label), label=f"{label} p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def memory_panel(ax, rows):
    # At the number actually connected: past a server's file cap that is less than N.
    for label, pts in series(rows, "connect", lambda r: (r.get("memory") or {}).get("per_conn_kb"),
                             x=lambda r: r.get("connected") or r["n"]).items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("connections held")
    ax.set_ylabel("server RSS per connection (KiB)")
    ax.set_title("Memory per connection (lower is better)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def docs_rate_panel(ax, rows):
    colours = {}
    for label, pts in series(rows, "docs", lambda r: r.get("ops_per_sec")).items():
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{label} sustained")
        colours[label] = line.get_color()
    for label, pts in series(rows, "docs", lambda r: r.get("offered_ops_per_sec")).items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="x", linestyle=":",
                color=colours.get(label), label=f"{label} offered")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("editors E on one document")
    ax.set_ylabel("edits per second")
    ax.set_title("Document edits sustained (higher is better)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    rows = data["rows"]
    present = {r["workload"] for r in rows}
    panels = []
    if present & {"fanout", "connect", "throughput"} or not present & {"docs"}:
        panels += [lambda ax: latency_panel(ax, rows, "fanout", "observers N", "Fan-out latency (lower is better)",
                                            "write → last observer (ms)"),
                   lambda ax: memory_panel(ax, rows)]
    if "docs" in present:
        panels += [lambda ax: latency_panel(ax, rows, "docs", "editors E on one document",
                                            "Edit → last other editor (lower is better)", "latency (ms)"),
                   lambda ax: docs_rate_panel(ax, rows)]
    cols = 2
    lines = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(lines, cols, figsize=(12, 4.8 * lines), squeeze=False)
    for draw, ax in zip(panels, axes.flat):
        draw(ax)
    meta = data.get("meta", {})
    fig.suptitle(f"Panes benchmark — {meta.get('mode', '')} run, {meta.get('started', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
