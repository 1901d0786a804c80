"""latency.png from results.json: run with Debian's /usr/bin/python3 and python3-matplotlib.

Usage: plot.py results.json latency.png
Left: change latency (write -> last observer) against N, median solid and p99
dashed, per system. Right: server memory per connection against N.
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


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    rows = data["rows"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    colours = {}
    for label, pts in series(rows, "fanout", lambda r: (r.get("latency_ms") or {}).get("p50")).items():
        line, = ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{label} median")
        colours[label] = line.get_color()
    for label, pts in series(rows, "fanout", lambda r: (r.get("latency_ms") or {}).get("p99")).items():
        ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="x", linestyle="--",
                 color=colours.get(label), label=f"{label} p99")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("observers N")
    ax1.set_ylabel("write → last observer (ms)")
    ax1.set_title("Fan-out latency (lower is better)")
    ax1.grid(True, which="both", alpha=0.3)
    if ax1.lines:
        ax1.legend(fontsize=7)

    # At the number actually connected: past a server's file cap that is less than N.
    for label, pts in series(rows, "connect", lambda r: (r.get("memory") or {}).get("per_conn_kb"),
                             x=lambda r: r.get("connected") or r["n"]).items():
        ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax2.set_xscale("log")
    ax2.set_xlabel("connections held")
    ax2.set_ylabel("server RSS per connection (KiB)")
    ax2.set_title("Memory per connection (lower is better)")
    ax2.grid(True, which="both", alpha=0.3)
    if ax2.lines:
        ax2.legend(fontsize=7)
    meta = data.get("meta", {})
    fig.suptitle(f"Panes benchmark — {meta.get('mode', '')} run, {meta.get('started', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
