"""scripts/bench's command line: what to run, in which mode, and putting it all together."""
from __future__ import annotations

import argparse
import os
import shutil
import time
from dataclasses import dataclass, field

from . import ROOT, log, procs, report, setup
from .systems import all_systems
from .workloads import run_connect, run_docs, run_fanout


@dataclass
class Plan:
    connect: list[int]
    fanout: list[int]
    throughput: list[int]
    writes: dict[int, int]      # from this N up -> measured changes per fanout run
    warmup: int
    timeout: float              # one generator run, seconds
    write_timeout: float
    docs: list[int] = field(default_factory=list)  # editors E on one document
    docs_rate: float = 5.0                          # edits per second per editor
    docs_warmup: float = 1.0                        # seconds typed before measuring
    docs_seconds: float = 10.0                      # seconds measured
    extra_systems: list[str] = field(default_factory=list)

    def writes_for(self, n: int) -> int:
        """Changes for N: the entry with the largest threshold at or below N."""
        keys = [k for k in self.writes if k <= n] or [min(self.writes)]
        return self.writes[max(keys)]


PLANS = {
    # Tiny N: keeps the tool working; run by scripts/test. Well under a minute once built.
    "smoke": Plan(connect=[20], fanout=[20], throughput=[20], writes={1: 10}, warmup=2,
                  timeout=60, write_timeout=5, docs=[3], docs_warmup=0.5, docs_seconds=1.5),
    # About two minutes (`docs --quick`: about one).
    "quick": Plan(connect=[1000, 10000], fanout=[1000, 10000], throughput=[1000],
                  writes={1: 100, 10000: 30}, warmup=5, timeout=180, write_timeout=10,
                  docs=[10, 100], docs_warmup=1, docs_seconds=5),
    "full": Plan(connect=[1000, 10000, 50000], fanout=[1000, 10000], throughput=[1000, 10000],
                 writes={1: 500, 10000: 100}, warmup=10, timeout=900, write_timeout=20,
                 docs=[10, 100], docs_warmup=2, docs_seconds=30, extra_systems=["panes-mem"]),
}

# command -> (workloads, systems)
COMMANDS = {
    "all": (["connect", "fanout", "throughput", "docs"], ["panes", "raw", "nchan", "yjs"]),
    "prefs": (["fanout"], ["panes", "raw"]),
    "connect": (["connect"], ["panes", "raw", "nchan", "yjs"]),
    "raw": (["connect", "fanout"], ["panes", "raw"]),
    # Issue 5. Only systems with a document model run it (raw and nchan have none).
    "docs": (["docs"], ["panes", "panes-mem", "yjs"]),
}
THROUGHPUT_INFLIGHT = 16
PEER_PACKAGES = ["python3-matplotlib"]


class Context:
    """What every run needs to know: binaries, limits, where to put things."""

    def __init__(self, args, plan: Plan, out_dir: str):
        self.allow_install = not args.no_install
        self.payload = args.payload
        self.timeout = plan.timeout
        self.write_timeout = plan.write_timeout
        self.out_dir = out_dir
        self.panes_bin = None
        self.panes_unavailable = None
        self.tool_unavailable = None
        self.yjs_updates = None
        self.yjs_editor_updates: dict[int, str] = {}  # docs: E -> each editor's own updates
        self.docs_rate = plan.docs_rate
        self.docs_warmup = plan.docs_warmup
        self.docs_seconds = plan.docs_seconds

    def run_dir(self, name: str) -> str:
        path = os.path.join(self.out_dir, "runs", name)
        os.makedirs(path, exist_ok=True)
        return path


def parse(argv):
    p = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Measure Panes beside a raw libwebsockets broadcast server, nchan and y-websocket, "
                    "on this machine, in one run; print one table with ratios.")
    p.add_argument("command", nargs="?", default="all", choices=["all", "prefs", "connect", "raw", "docs"],
                   help="all (default): every workload and system; prefs: preference fan-out, Panes and the "
                        "raw ceiling; connect: idle connections and memory; raw: Panes against the raw "
                        "lws ceiling; docs: E editors typing into one document (issue 5), Panes, Panes "
                        "(memory store) and y-websocket")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="N = 1k and 10k (docs: E = 10, 100), fewer changes, shorter windows: about three minutes")
    mode.add_argument("--smoke", action="store_true", help="tiny N (docs: E = 3): checks the tool works (scripts/test)")
    p.add_argument("--systems", help="comma-separated: panes, panes-mem, raw, nchan, yjs")
    p.add_argument("--n", help="comma-separated N for every workload (overrides the mode's)")
    p.add_argument("--writes", type=int, help="measured changes per fan-out run (overrides the mode's)")
    p.add_argument("--rate", type=float, help="docs: edits per second per editor (5)")
    p.add_argument("--seconds", type=float, help="docs: seconds measured (smoke 1.5, quick 5, full 30)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run everything R times, round after round, and keep each row's median run "
                        "(by median latency); every run is kept in results.json")
    p.add_argument("--payload", type=int, default=64, help="application bytes per change (64)")
    p.add_argument("--panes-bin", default=os.environ.get("PANES_BINARY"),
                   help="a panes executable to use instead of building one (env PANES_BINARY)")
    p.add_argument("--no-install", action="store_true", help="do not install missing Debian packages")
    p.add_argument("--out", help="output folder (default bench-results/<timestamp>)")
    return p.parse_args(argv)


def prepare_tools(ctx: Context, want_panes: bool, smoke: bool) -> bool:
    built = setup.build_products(["panes-load", "panes-raw-broadcast"])
    if built["panes-load"]:
        log(f"cannot build the load generator: {built['panes-load']}")
        return False
    ctx.tool_unavailable = built["panes-raw-broadcast"]
    if not want_panes:
        return True
    debug = os.path.join(ROOT, ".build", "debug", "panes")
    if ctx.panes_bin:
        ctx.panes_bin = os.path.abspath(ctx.panes_bin)
        if not os.access(ctx.panes_bin, os.X_OK):
            ctx.panes_unavailable = f"--panes-bin {ctx.panes_bin} is not executable"
    elif smoke and os.access(debug, os.X_OK):
        ctx.panes_bin = debug  # scripts/test has just built it; a smoke run needs no release build
        log(f"using {os.path.relpath(debug, ROOT)} (debug build) for the smoke run")
    else:
        ctx.panes_unavailable = setup.build_products(["panes"])["panes"]
        ctx.panes_bin = setup.binary("panes")
    return True


def main(argv) -> int:
    args = parse(argv)
    procs.install_cleanup()
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    plan = PLANS[mode]
    workloads, names = COMMANDS[args.command]
    if args.command == "all":
        names = names + plan.extra_systems
    if args.systems:
        names = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.n:
        ns = [int(x) for x in args.n.split(",")]
        plan.connect = plan.fanout = plan.throughput = plan.docs = ns
    if args.writes:
        plan.writes = {1: args.writes}
    if args.rate:
        plan.docs_rate = args.rate
    if args.seconds:
        plan.docs_seconds = args.seconds
    systems = all_systems()
    unknown = [s for s in names if s not in systems]
    if unknown:
        log(f"unknown systems: {', '.join(unknown)} (known: {', '.join(systems)})")
        return 2

    started = time.strftime("%Y-%m-%dT%H-%M-%S")
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "bench-results", started))
    os.makedirs(out_dir, exist_ok=True)
    ctx = Context(args, plan, out_dir)
    ctx.panes_bin = args.panes_bin
    log(f"{mode} run of `{args.command}`: systems {', '.join(names)}; results in {out_dir}")

    if not prepare_tools(ctx, any(n.startswith("panes") for n in names), args.smoke):
        return 1
    chosen = [systems[n] for n in names]
    for s in chosen:
        s.prepare(ctx)
        if s.unavailable:
            log(f"{s.label}: unavailable: {s.unavailable}")
    yjs = any(s.name == "yjs" and not s.unavailable for s in chosen)
    if yjs and "docs" in workloads:
        # Every editor's own updates: enough for every tick of warm-up and measuring, and some.
        per_editor = int(plan.docs_rate * (plan.docs_warmup + plan.docs_seconds) * 1.1) + 20
        for e in sorted(set(plan.docs)):
            path = os.path.join(out_dir, f"yjs-editors-{e}.bin")
            err = setup.make_yjs_editor_updates(path, e, per_editor)
            if err:
                log(f"y-websocket: no docs updates for E={e}: {err}")
            else:
                ctx.yjs_editor_updates[e] = path
    if yjs and ("fanout" in workloads or "throughput" in workloads):
        most = max(plan.writes_for(n) for n in plan.fanout + plan.throughput) * 2 + plan.warmup + 10
        ctx.yjs_updates = os.path.join(out_dir, "yjs-updates.bin")
        err = setup.make_yjs_updates(ctx.yjs_updates, most, args.payload)
        if err:
            systems["yjs"].unavailable = err
            log(f"y-websocket: unavailable: {err}")

    runs = []
    jobs = []
    # Rounds, not repeats in place: contention from elsewhere then spreads over every system.
    for _ in range(max(1, args.repeat)):
        for w in workloads:
            for n in getattr(plan, w):
                for s in chosen:
                    if s.supports(w):
                        jobs.append((w, n, s))
    for w in workloads:
        idle = [s.label for s in chosen if not s.supports(w)]
        if idle:
            log(f"{w}: not run on {', '.join(idle)} (no document model)" if w == "docs"
                else f"{w}: not run on {', '.join(idle)}")
    for i, (w, n, s) in enumerate(jobs, 1):
        if s.unavailable:
            runs.append({"workload": w, "n": n, "system": s.name, "label": s.label,
                         "status": "unavailable", "reason": s.unavailable})
            continue
        log(f"[{i}/{len(jobs)}] {w} N={n:,} on {s.label}")
        try:
            if w == "connect":
                row = run_connect(ctx, s, n)
            elif w == "docs":
                row = run_docs(ctx, s, n)
            else:
                writes = plan.writes_for(n) * (2 if w == "throughput" else 1)
                row = run_fanout(ctx, s, n, writes, plan.warmup,
                                 THROUGHPUT_INFLIGHT if w == "throughput" else 1, workload=w)
        except Exception as e:  # noqa: BLE001 - one system's failure must not end the run
            row = {"workload": w, "n": n, "system": s.name, "label": s.label,
                   "status": "failed", "reason": str(e)}
            log(f"  failed: {e}")
        finally:
            procs.stop_all()
            for d in ("data", "body", "proxy", "fastcgi", "uwsgi", "scgi"):
                shutil.rmtree(os.path.join(out_dir, "runs", f"{w}-{s.name}-{n}", d), ignore_errors=True)
        runs.append(row)
        _summary(row)
    rows = _medians(runs)

    meta = {"mode": mode, "command": args.command, "started": started, "payload": args.payload,
            "repeat": max(1, args.repeat),
            "machine": {"cores": os.cpu_count(), "memory_gib": _mem_gib()},
            "versions": setup.versions(), "panes_binary": ctx.panes_bin,
            "plan": {"connect": plan.connect, "fanout": plan.fanout, "throughput": plan.throughput,
                     "writes": {n: plan.writes_for(n) for n in plan.fanout}, "warmup": plan.warmup,
                     "throughput_inflight": THROUGHPUT_INFLIGHT,
                     "docs": {"editors": plan.docs, "rate_per_editor": plan.docs_rate,
                              "warmup_s": plan.docs_warmup, "measure_s": plan.docs_seconds}}}
    text = report.write(out_dir, rows, systems, meta)
    print(text)
    why = setup.ensure_packages(PEER_PACKAGES, ctx.allow_install)
    why = why or report.plot(out_dir)
    if why:
        log(f"no latency.png: {why}")
    log(f"wrote {os.path.relpath(out_dir, os.getcwd())}/results.json, results.md"
        f"{'' if why else ', latency.png'}")
    return 0


def _medians(runs: list[dict]) -> list[dict]:
    """One row per (workload, N, system): the run with the median median-latency."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["workload"], r["n"], r["system"]), []).append(r)
    rows = []
    for group in groups.values():
        measured = [r for r in group if r.get("latency_ms")]
        if not measured:
            rows.append(group[0])
            continue
        measured.sort(key=lambda r: r["latency_ms"]["p50"])
        row = dict(measured[(len(measured) - 1) // 2])
        if len(group) > 1:
            row["repeats"] = [{k: r.get(k) for k in ("status", "latency_ms", "memory", "cpu", "changes_per_sec",
                                                       "ops_per_sec", "skipped", "connected")
                               if k in r} for r in group]
        rows.append(row)
    return rows


def _summary(row: dict) -> None:
    lat = row.get("latency_ms") or {}
    mem = (row.get("memory") or {}).get("per_conn_kb")
    cpu = row.get("cpu") or {}
    if row["status"] in ("ok", "partial") and row["workload"] == "docs":
        log(f"  {row['status']}: {row.get('ops_per_sec')} ops/s of {row.get('offered_ops_per_sec')} offered, "
            f"{row.get('skipped')} ticks skipped, to the last editor median {lat.get('p50')} ms, p99 "
            f"{lat.get('p99')} ms, {_kib((row.get('memory') or {}).get('doc_open_kb'))} per open document, "
            f"{row.get('refused')} refused, CPU server {cpu.get('server_s')} s / generator {cpu.get('generator_s')} s")
    elif row["status"] in ("ok", "partial"):
        log(f"  {row['status']}: connected {row.get('connected')}, median {lat.get('p50')} ms, "
            f"p99 {lat.get('p99')} ms, {mem} KiB/conn, CPU server {cpu.get('server_s')} s / "
            f"generator {cpu.get('generator_s')} s")


def _mem_gib() -> float:
    with open("/proc/meminfo") as f:
        return round(int(f.readline().split()[1]) / 2**20, 1)


def _kib(v) -> str:
    return "— KiB (joined on connect)" if v is None else f"{v} KiB"
