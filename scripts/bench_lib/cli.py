"""scripts/bench's command line: what to run, in which mode, and putting it all together."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Optional

from . import ROOT, log, page, procs, report, setup, workloads as workloads_module
from .catalog import all_systems
from .authflood import run_authflood
from .cluster import run_cluster_docs, run_cluster_failover
from .idle import run_connect_under_load, run_idle
from .soak import run_soak
from .storm import run_storm
from .workloads import run_connect, run_docs, run_docsize, run_fanout
from .writes import run_acklat, run_prefwrite


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
    # Issue 14's rows: the N (or rate, document size, keys) each runs at.
    docsize: list[int] = field(default_factory=list)     # document bytes at the start
    docsize_editors: int = 50
    docsize_rate: float = 100.0                          # per editor: more than the server can take
    docsize_seconds: float = 10.0
    idle: list[int] = field(default_factory=list)        # idle connections held
    idle_seconds: float = 10.0
    idle_empty_seconds: float = 3.0
    after_connect: float = 2.0
    cul: list[int] = field(default_factory=list)         # connect-under-load: idle connections held
    probe_count: int = 30
    probe_gap: float = 0.2
    probe_tail: float = 0.1
    probe_idle_seconds: float = 3.0
    acklat: list[int] = field(default_factory=list)      # writes/s, open loop; 0 = closed loop (ceiling)
    acklat_writers: int = 10
    acklat_inflight: int = 32
    acklat_warmup: float = 2.0
    acklat_seconds: float = 10.0
    prefwrite: list[int] = field(default_factory=list)   # keys in the user's domain
    prefwrite_seconds: float = 5.0
    soak: list[int] = field(default_factory=list)        # idle scenes held
    soak_seconds: float = 600.0
    soak_sample: float = 5.0
    soak_warmup: float = 2.0
    settle: float = 0.5                                  # before reading a server's memory
    # Issue 11's cluster rows (cluster.py): observers N spread over 1, 2, 3 nodes; E editors on one
    # hot document, each attempting more edits than the server takes (sustained ops/s is the ceiling).
    cluster_fanout: list[int] = field(default_factory=list)
    cluster_docs: list[int] = field(default_factory=list)
    cluster_docs_rate: float = 100.0
    cluster_docs_seconds: float = 10.0
    cluster_failover: list[int] = field(default_factory=list)   # windows on the killed node
    # Issue 27: N windows coming back at once after a restart.
    storm: list[int] = field(default_factory=list)
    # Issue 26's authentication flood: N = RS256 forged tokens a second (ES256 at a share of it),
    # phases of `authflood_seconds`, idle and flooded in turn, `authflood_rounds` times.
    authflood: list[int] = field(default_factory=list)
    authflood_es_ratio: float = 348 / 700
    authflood_seconds: float = 10.0
    authflood_rounds: int = 3

    def writes_for(self, n: int) -> int:
        """Changes for N: the entry with the largest threshold at or below N."""
        keys = [k for k in self.writes if k <= n] or [min(self.writes)]
        return self.writes[max(keys)]

    def ns(self, workload: str) -> list[int]:
        return getattr(self, WORKLOADS[workload][0])


PLANS = {
    # Tiny N and windows of a second: keeps the tool working; run by scripts/test. Under a minute once built.
    "smoke": Plan(connect=[20], fanout=[20], throughput=[20], writes={1: 10}, warmup=2,
                  timeout=60, write_timeout=5, docs=[3], docs_warmup=0.5, docs_seconds=1.5,
                  docsize=[20000], docsize_editors=3, docsize_rate=20, docsize_seconds=1,
                  idle=[20], idle_seconds=1, idle_empty_seconds=0.3, after_connect=0.3,
                  cul=[20], probe_count=3, probe_gap=0.05, probe_tail=0.05, probe_idle_seconds=0.3,
                  acklat=[200, 0], acklat_writers=2, acklat_inflight=4, acklat_warmup=0.3, acklat_seconds=1,
                  prefwrite=[10, 200], prefwrite_seconds=0.5,
                  soak=[20], soak_seconds=1, soak_sample=0.5, soak_warmup=0.5, settle=0.2,
                  cluster_fanout=[20], cluster_docs=[3], cluster_docs_rate=20, cluster_docs_seconds=1,
                  cluster_failover=[10], storm=[20],
                  authflood=[60], authflood_seconds=1, authflood_rounds=1),
    # About ten minutes (`docs --quick`: about two).
    "quick": Plan(connect=[1000, 10000], fanout=[1000, 10000], throughput=[1000],
                  writes={1: 300, 10000: 300}, warmup=5, timeout=180, write_timeout=10,
                  docs=[10, 100], docs_warmup=1, docs_seconds=5,
                  docsize=[100, 1_000_000], docsize_seconds=5,
                  idle=[1000, 10000], cul=[1000, 10000], probe_count=20, probe_idle_seconds=2,
                  idle_empty_seconds=2, acklat=[1000, 5000, 0], acklat_warmup=1, acklat_seconds=5,
                  prefwrite=[10, 3000], prefwrite_seconds=3,
                  soak=[10000], soak_seconds=60, soak_sample=2,
                  cluster_fanout=[1000], cluster_docs=[50], cluster_docs_seconds=5, cluster_failover=[100],
                  storm=[10000], authflood=[700], authflood_seconds=5, authflood_rounds=2),
    "full": Plan(connect=[1000, 10000, 50000], fanout=[1000, 10000], throughput=[1000, 10000],
                 writes={1: 500, 10000: 300}, warmup=10, timeout=900, write_timeout=20,
                 docs=[10, 100], docs_warmup=2, docs_seconds=30,
                 docsize=[100, 1_000_000], docsize_seconds=20,
                 idle=[1000, 10000], cul=[1000, 10000],
                 acklat=[1000, 5000, 0], acklat_seconds=20,
                 prefwrite=[10, 10000], prefwrite_seconds=5,
                 soak=[10000], soak_seconds=600, soak_sample=5,
                 cluster_fanout=[1000, 10000], cluster_docs=[50], cluster_docs_seconds=20,
                 cluster_failover=[100, 1000], storm=[10000],
                 authflood=[700], authflood_seconds=10, authflood_rounds=3),
}

# workload -> (the Plan field with its N list, how to run one row)
WORKLOADS = {
    "connect": ("connect", lambda ctx, s, n, plan: run_connect(ctx, s, n)),
    "fanout": ("fanout", lambda ctx, s, n, plan: run_fanout(ctx, s, n, plan.writes_for(n), plan.warmup, 1)),
    "throughput": ("throughput", lambda ctx, s, n, plan: run_fanout(
        ctx, s, n, plan.writes_for(n) * 2, plan.warmup, THROUGHPUT_INFLIGHT, workload="throughput")),
    "docs": ("docs", lambda ctx, s, n, plan: run_docs(ctx, s, n)),
    "docsize": ("docsize", lambda ctx, s, n, plan: run_docsize(ctx, s, n)),
    "idle": ("idle", lambda ctx, s, n, plan: run_idle(ctx, s, n)),
    "connect-under-load": ("cul", lambda ctx, s, n, plan: run_connect_under_load(ctx, s, n)),
    "acklat": ("acklat", lambda ctx, s, n, plan: run_acklat(ctx, s, n)),
    "prefwrite": ("prefwrite", lambda ctx, s, n, plan: run_prefwrite(ctx, s, n)),
    "soak": ("soak", lambda ctx, s, n, plan: run_soak(ctx, s, n)),
    "cluster-fanout": ("cluster_fanout", lambda ctx, s, n, plan: run_fanout(
        ctx, s, n, plan.writes_for(n), plan.warmup, 1, workload="cluster-fanout")),
    "cluster-docs": ("cluster_docs", lambda ctx, s, n, plan: run_cluster_docs(ctx, s, n)),
    "cluster-failover": ("cluster_failover", lambda ctx, s, n, plan: run_cluster_failover(ctx, s, n)),
    "storm": ("storm", lambda ctx, s, n, plan: run_storm(ctx, s, n)),
    "authflood": ("authflood", lambda ctx, s, n, plan: run_authflood(ctx, s, n)),
}

PEERS = ["panes", "raw", "nchan", "yjs"]
# "panes-loops": Panes on each loop it offers (`--event-loop poll|libev`), or as it is if it offers none.
# Raw lws as it comes, and (-rx2k) with the receive buffer Panes uses (systems.PANES_RX_BUFFER).
LOOPS = ["panes-loops", "raw", "raw-libev", "raw-rx2k", "raw-libev-rx2k"]
SYSTEMS = {
    "connect": PEERS, "fanout": PEERS, "throughput": PEERS,
    "docs": ["panes", "panes-mem", "yjs"], "docsize": ["panes", "panes-mem"],
    "idle": LOOPS, "connect-under-load": LOOPS,
    "acklat": ["panes", "panes-pg", "panes-mem"], "prefwrite": ["panes"], "soak": ["panes"],
    # 1 node is each cluster row's baseline; cluster-docs also has single-node SQLite beside it.
    "cluster-fanout": ["cluster-1", "cluster-2", "cluster-3"],
    "cluster-docs": ["panes", "cluster-1", "cluster-2"],
    "cluster-failover": ["cluster-3"],
    # Issue 27: Panes restarted (drained, and killed), beside raw lws on Panes' loop and on its own, and nchan.
    "storm": ["panes", "panes-kill9", "cluster-2-failover", "raw-libev", "raw", "nchan"],
    "authflood": ["panes"],
}
# The smoke run checks every row works, on as few systems as that takes.
SMOKE_SYSTEMS = {"docsize": ["panes"], "idle": ["panes-loops", "raw-libev", "raw-libev-rx2k"],
                 "connect-under-load": ["panes-loops", "raw"], "acklat": ["panes"],
                 "cluster-fanout": ["cluster-2"], "cluster-docs": ["cluster-2"], "cluster-failover": ["cluster-3"],
                 "storm": ["panes", "panes-kill9", "raw-libev"]}

# command -> workloads
COMMANDS = {
    "all": list(WORKLOADS),
    "prefs": ["fanout"],
    "connect": ["connect"],
    "raw": ["connect", "fanout"],
    "docs": ["docs", "docsize"],
    "docsize": ["docsize"],
    "idle": ["idle"],
    "connect-under-load": ["connect-under-load"],
    "loop": ["idle", "connect-under-load"],
    "acklat": ["acklat"],
    "prefwrite": ["prefwrite"],
    "soak": ["soak"],
    # Issue 11: the cluster rows, and durable ack latency on PostgreSQL beside SQLite (acklat).
    "cluster": ["cluster-fanout", "cluster-docs", "acklat", "cluster-failover"],
    # Issue 27: windows of a node killed with SIGKILL, back through haproxy.
    "cluster-failover": ["cluster-failover"],
    # Just the hot document row (SQLite, 1 and 2 PostgreSQL nodes), e.g. to compare builds.
    "cluster-docs": ["cluster-docs"],
    # Just the fan-out over 1, 2 and 3 PostgreSQL nodes.
    "cluster-fanout": ["cluster-fanout"],
    # Issue 27: every window back at once after a restart, beside raw lws and nchan connecting as many.
    "storm": ["storm"],
    # Issue 26: a legitimate scene's ping while one address floods forged RS256 / ES256 tokens.
    "authflood": ["authflood"],
    "profile": [],
}
COMMAND_SYSTEMS = {"prefs": ["panes", "raw"], "raw": ["panes", "raw"]}
# (command, workload) -> systems, where a command runs a workload on fewer systems than `all`.
COMMAND_WORKLOAD_SYSTEMS = {("cluster", "acklat"): ["panes", "panes-pg"]}
THROUGHPUT_INFLIGHT = 16


class Context:
    """What every run needs to know: binaries, limits, where to put things."""

    def __init__(self, args, plan: Plan, out_dir: str):
        self.allow_install = not args.no_install
        self.payload = args.payload
        self.idempotency_keys = getattr(args, "idempotency_keys", False)
        self.timeout = plan.timeout
        self.write_timeout = plan.write_timeout
        self.out_dir = out_dir
        self.panes_bin = None
        self.panes_unavailable = None
        self.tool_unavailable = None
        self.yjs_updates = None
        self.yjs_editor_updates: dict[int, str] = {}  # docs: E -> each editor's own updates
        self.server_args = shlex.split(args.server_args or os.environ.get("PANES_SERVE_ARGS", ""))
        for name in ("docs_rate", "docs_warmup", "docs_seconds", "docsize_editors", "docsize_rate",
                     "docsize_seconds", "idle_seconds", "idle_empty_seconds", "after_connect", "probe_count",
                     "probe_gap", "probe_tail", "probe_idle_seconds", "acklat_writers", "acklat_inflight",
                     "acklat_warmup", "acklat_seconds", "prefwrite_seconds", "soak_seconds", "soak_sample",
                     "soak_warmup", "cluster_docs_rate", "cluster_docs_seconds", "authflood_es_ratio",
                     "authflood_seconds", "authflood_rounds"):
            setattr(self, name, getattr(plan, name))
        self._serve_help: Optional[str] = None
        self._settings: Optional[set[str]] = None

    def run_dir(self, name: str) -> str:
        path = os.path.join(self.out_dir, "runs", name)
        os.makedirs(path, exist_ok=True)
        return path

    def panes_serve_help(self) -> str:
        """`panes serve --help`: which options this server has (e.g. --event-loop)."""
        if self._serve_help is None:
            r = subprocess.run([self.panes_bin, "serve", "--help"], capture_output=True, text=True)
            self._serve_help = r.stdout + r.stderr
        return self._serve_help

    def panes_settings(self) -> set[str]:
        """The settings this server knows (`panes settings`); it refuses any other."""
        if self._settings is None:
            r = subprocess.run([self.panes_bin, "settings"], capture_output=True, text=True)
            self._settings = set(re.findall(r"^\| `(\w+)` \|", r.stdout, re.M))
        return self._settings


def parse(argv):
    p = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Measure Panes beside a raw libwebsockets broadcast server, nchan and y-websocket, "
                    "on this machine, in one run; print one table with ratios.")
    p.add_argument("command", nargs="?", default="all", choices=list(COMMANDS),
                   help="all (default): every workload; prefs: preference fan-out, Panes and the raw ceiling; "
                        "connect: idle connections and memory; raw: Panes against the raw lws ceiling; docs: "
                        "E editors typing into one document (issue 5) and a tiny and a 1 MB document with 50 "
                        "editors (docsize); idle, connect-under-load (loop: both): what idle connections cost, "
                        "Panes and raw lws on each event loop; acklat: durable write latency, open loop, and "
                        "the sustained ceiling; prefwrite: a preference write with 10 and 10,000 keys in the "
                        "domain; soak: idle scenes held while people type, CPU and RSS over time; profile: "
                        "perf record of the server during 10k fan-out and during connects with 10k idle held; "
                        "cluster (issue 11): fan-out with observers over 1, 2 and 3 PostgreSQL nodes (same-node "
                        "and cross-node delivery), one hot document edited from 2 nodes vs 1 node vs SQLite, "
                        "and acklat on PostgreSQL beside SQLite; per node: ops/s and CPU per op; storm (issue 27): "
                        "N windows resuming at once after a restart, beside raw lws and nchan connecting as many; authflood "
                        "(issue 26): a legitimate scene's ping p50/p99 while one address floods N forged RS256 "
                        "(and ES256) tokens a second, alternating with idle phases in the same run")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer changes, shorter windows: about ten minutes for all")
    mode.add_argument("--smoke", action="store_true", help="tiny N, windows of a second: checks the tool works (scripts/test)")
    p.add_argument("--systems", help="comma-separated: panes, panes-mem, panes-pg, panes-libev, panes-poll, panes-kill9, "
                                     "raw, raw-libev, raw-rx2k, raw-libev-rx2k, nchan, yjs, cluster-1, cluster-2, cluster-3, cluster-2-failover "
                                     "(each row runs on those of them that support it)")
    p.add_argument("--n", help="comma-separated N for every workload (overrides the mode's)")
    p.add_argument("--writes", type=int, help="measured changes per fan-out run (overrides the mode's)")
    p.add_argument("--rate", type=float, help="docs: edits per second per editor (5; cluster-docs: 100)")
    p.add_argument("--seconds", type=float, help="docs, cluster-docs: seconds measured; soak: its window "
                                                 "(overrides the mode's)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run everything R times, round after round, and keep each row's median run "
                        "(by median latency); every run is kept in results.json")
    p.add_argument("--payload", type=int, default=64, help="application bytes per change (64)")
    p.add_argument("--idempotency-keys", action="store_true",
                   help="acklat, prefwrite: every write carries an idempotencyKey of its own (issue 27), as the "
                        "JavaScript client sends them")
    p.add_argument("--panes-bin", default=os.environ.get("PANES_BINARY"),
                   help="a panes executable to use instead of building one (env PANES_BINARY)")
    p.add_argument("--server-args", help="extra options for every `panes serve` (env PANES_SERVE_ARGS), "
                                         "e.g. \"--event-loop libev\"")
    p.add_argument("--publish", action="store_true",
                   help="also write the results into docs/bench/ (the page docs/benchmarks.md and the README link): its rows are "
                        "replaced by this run's, others kept")
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


def _systems_for(workload: str, args, mode: str, ctx: Context, systems: dict) -> list:
    if args.systems:
        names = [s.strip() for s in args.systems.split(",") if s.strip()]
    else:
        names = list(COMMAND_SYSTEMS.get(args.command) or
                     (COMMAND_WORKLOAD_SYSTEMS.get((args.command, workload)) if mode != "smoke" else None) or
                     (SMOKE_SYSTEMS.get(workload) if mode == "smoke" else None) or SYSTEMS[workload])
        if mode == "full" and args.command == "all" and workload in ("connect", "fanout", "throughput"):
            names.append("panes-mem")
    out = []
    for name in names:
        if name == "panes-loops":
            loops = ctx.panes_bin and not ctx.panes_unavailable and "--event-loop" in ctx.panes_serve_help()
            out += ["panes-poll", "panes-libev"] if loops else ["panes"]
        else:
            out.append(name)
    return [systems[n] for n in dict.fromkeys(out) if systems[n].supports(workload)]


def main(argv) -> int:
    args = parse(argv)
    procs.install_cleanup()
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    plan = PLANS[mode]
    workloads = COMMANDS[args.command]
    if args.n:
        ns = [int(x) for x in args.n.split(",")]
        for w in workloads:
            setattr(plan, WORKLOADS[w][0], ns)
    if args.writes:
        plan.writes = {1: args.writes}
    if args.rate:
        plan.docs_rate = plan.cluster_docs_rate = args.rate
    if args.seconds:
        plan.docs_seconds = plan.soak_seconds = plan.cluster_docs_seconds = args.seconds
    systems = all_systems()
    if args.systems:
        unknown = [s for s in args.systems.split(",") if s.strip() and s.strip() not in systems]
        if unknown:
            log(f"unknown systems: {', '.join(unknown)} (known: {', '.join(systems)})")
            return 2

    started = time.strftime("%Y-%m-%dT%H-%M-%S")
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "bench-results", started))
    os.makedirs(out_dir, exist_ok=True)
    ctx = Context(args, plan, out_dir)
    ctx.panes_bin = args.panes_bin
    workloads_module.SETTLE = plan.settle
    log(f"{mode} run of `{args.command}`; results in {out_dir}")
    if not prepare_tools(ctx, True, args.smoke):
        return 1
    if args.command == "profile":
        from .profile import run_profile
        return run_profile(ctx, mode, out_dir)

    chosen_by_workload = {w: _systems_for(w, args, mode, ctx, systems) for w in workloads}
    prepared = set()
    for chosen in chosen_by_workload.values():
        for s in chosen:
            if s.name not in prepared:
                prepared.add(s.name)
                s.prepare(ctx)
                if s.unavailable:
                    log(f"{s.label}: unavailable: {s.unavailable}")
    _prepare_yjs(ctx, plan, chosen_by_workload, out_dir, systems, args.payload)

    runs = []
    jobs = []
    # Rounds, not repeats in place: contention from elsewhere then spreads over every system.
    for _ in range(max(1, args.repeat)):
        for w in workloads:
            for n in plan.ns(w):
                for s in chosen_by_workload[w]:
                    jobs.append((w, n, s))
    for w in workloads:
        idle = [s.label for s in systems.values() if s.name in SYSTEMS[w] and not s.supports(w)]
        if idle:
            log(f"{w}: not run on {', '.join(idle)}")
    for i, (w, n, s) in enumerate(jobs, 1):
        if s.unavailable:
            runs.append({"workload": w, "n": n, "system": s.name, "label": s.label,
                         "status": "unavailable", "reason": s.unavailable})
            continue
        log(f"[{i}/{len(jobs)}] {w} N={n:,} on {s.label}")
        try:
            row = WORKLOADS[w][1](ctx, s, n, plan)
        except Exception as e:  # noqa: BLE001 - one system's failure must not end the run
            row = {"workload": w, "n": n, "system": s.name, "label": s.label,
                   "status": "failed", "reason": str(e)}
            log(f"  failed: {e}")
        finally:
            procs.stop_all()
            for d in ("data", "body", "proxy", "fastcgi", "uwsgi", "scgi"):
                for sub in os.listdir(os.path.join(out_dir, "runs")) if os.path.isdir(os.path.join(out_dir, "runs")) else []:
                    if sub.startswith(f"{w}-{s.name}-"):
                        shutil.rmtree(os.path.join(out_dir, "runs", sub, d), ignore_errors=True)
        if s.event_loop(ctx):
            row["event_loop"] = s.event_loop(ctx)
        runs.append(row)
        _summary(row)
    rows = _medians(runs)

    meta = {"mode": mode, "command": args.command, "started": started, "payload": args.payload,
            "repeat": max(1, args.repeat),
            "machine": {"cores": os.cpu_count(), "memory_gib": _mem_gib()},
            "versions": setup.versions(), "panes_binary": ctx.panes_bin, "server_args": ctx.server_args,
            "plan": {"connect": plan.connect, "fanout": plan.fanout, "throughput": plan.throughput,
                     "writes": {n: plan.writes_for(n) for n in plan.fanout}, "warmup": plan.warmup,
                     "throughput_inflight": THROUGHPUT_INFLIGHT,
                     "docs": {"editors": plan.docs, "rate_per_editor": plan.docs_rate,
                              "warmup_s": plan.docs_warmup, "measure_s": plan.docs_seconds},
                     "docsize": {"bytes": plan.docsize, "editors": plan.docsize_editors,
                                 "rate_per_editor": plan.docsize_rate, "measure_s": plan.docsize_seconds},
                     "idle": {"n": plan.idle, "seconds": plan.idle_seconds},
                     "connect_under_load": {"n": plan.cul, "probes": plan.probe_count},
                     "acklat": {"rates": plan.acklat, "writers": plan.acklat_writers,
                                "inflight": plan.acklat_inflight, "measure_s": plan.acklat_seconds},
                     "prefwrite": {"keys": plan.prefwrite, "measure_s": plan.prefwrite_seconds},
                     "soak": {"n": plan.soak, "seconds": plan.soak_seconds, "sample_s": plan.soak_sample},
                     "storm": {"n": plan.storm},
                     "authflood": {"rs256_per_sec": plan.authflood, "es256_share": plan.authflood_es_ratio,
                                   "phase_s": plan.authflood_seconds, "rounds": plan.authflood_rounds},
                     "cluster": {"fanout": plan.cluster_fanout, "docs_editors": plan.cluster_docs,
                                 "docs_rate_per_editor": plan.cluster_docs_rate,
                                 "docs_measure_s": plan.cluster_docs_seconds}}}
    text = report.write(out_dir, rows, systems, meta)
    print(text)
    drawn = page.write(out_dir, rows, systems, meta)
    log(f"wrote {os.path.relpath(out_dir, os.getcwd())}/results.json, results.md, index.md and "
        f"{len(drawn)} plots ({', '.join(drawn)})")
    if args.publish:
        where = page.publish(rows, systems, meta)
        log(f"published to {os.path.relpath(where, os.getcwd())}")
    return 0


def _prepare_yjs(ctx, plan, chosen_by_workload, out_dir, systems, payload) -> None:
    yjs = systems["yjs"]
    if yjs.unavailable:
        return
    if yjs in chosen_by_workload.get("docs", []):
        # Every editor's own updates: enough for every tick of warm-up and measuring, and some.
        per_editor = int(plan.docs_rate * (plan.docs_warmup + plan.docs_seconds) * 1.1) + 20
        for e in sorted(set(plan.docs)):
            path = os.path.join(out_dir, f"yjs-editors-{e}.bin")
            err = setup.make_yjs_editor_updates(path, e, per_editor)
            if err:
                log(f"y-websocket: no docs updates for E={e}: {err}")
            else:
                ctx.yjs_editor_updates[e] = path
    fan = [n for w in ("fanout", "throughput") if yjs in chosen_by_workload.get(w, []) for n in plan.ns(w)]
    if fan:
        most = max(plan.writes_for(n) for n in fan) * 2 + plan.warmup + 10
        ctx.yjs_updates = os.path.join(out_dir, "yjs-updates.bin")
        err = setup.make_yjs_updates(ctx.yjs_updates, most, payload)
        if err:
            yjs.unavailable = err
            log(f"y-websocket: unavailable: {err}")


def _key(r: dict) -> float:
    lat = r.get("latency_ms") or r.get("connect_cpu_ms") or {}
    if r["workload"] == "idle":
        return (r.get("idle") or {}).get("cores") or 0
    if r["workload"] == "soak":
        return (r.get("cpu_cores") or {}).get("mean") or 0
    if r["workload"] == "storm":
        return r.get("storm_seconds") or 0
    return lat.get("p50") or 0


def _medians(runs: list[dict]) -> list[dict]:
    """One row per (workload, N, system): the run with the median of its main figure."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["workload"], r["n"], r["system"]), []).append(r)
    rows = []
    for group in groups.values():
        measured = [r for r in group if r["status"] in ("ok", "partial")]
        if not measured:
            rows.append(group[0])
            continue
        measured.sort(key=_key)
        row = dict(measured[(len(measured) - 1) // 2])
        if len(group) > 1:
            row["repeats"] = [{k: r.get(k) for k in ("status", "latency_ms", "memory", "cpu", "changes_per_sec",
                                                       "ops_per_sec", "skipped", "connected", "idle",
                                                       "connect_cpu_ms", "writes_per_sec", "cpu_cores",
                                                       "storm_seconds", "normal_ping_ms")
                               if k in r} for r in group]
        rows.append(row)
    return rows


def _summary(row: dict) -> None:
    lat = row.get("latency_ms") or {}
    mem = (row.get("memory") or {}).get("per_conn_kb")
    cpu = row.get("cpu") or {}
    if row["status"] not in ("ok", "partial"):
        return
    if row["workload"] in ("docs", "docsize", "cluster-docs"):
        log(f"  {row['status']}: {row.get('ops_per_sec')} ops/s of {row.get('offered_ops_per_sec')} offered, "
            f"{row.get('skipped')} ticks skipped, to the last editor median {lat.get('p50')} ms, p99 "
            f"{lat.get('p99')} ms, ack p99 {(row.get('ack_ms') or {}).get('p99')} ms, "
            f"{_kib((row.get('memory') or {}).get('doc_open_kb'))} per open document, "
            f"{row.get('refused')} refused, CPU server {cpu.get('server_s')} s / generator {cpu.get('generator_s')} s")
    elif row["workload"] in ("connect", "fanout", "throughput", "cluster-fanout"):
        log(f"  {row['status']}: connected {row.get('connected')}, median {lat.get('p50')} ms, "
            f"p99 {lat.get('p99')} ms, {mem} KiB/conn, CPU server {cpu.get('server_s')} s / "
            f"generator {cpu.get('generator_s')} s")
    if row.get("cross_node_ms") or row.get("same_node_ms"):
        same, cross = row.get("same_node_ms") or {}, row.get("cross_node_ms") or {}
        log(f"  same-node delivery median {same.get('p50')} · p99 {same.get('p99')} ms, cross-node median "
            f"{cross.get('p50')} · p99 {cross.get('p99')} ms")
    c = row.get("cluster")
    if c:
        log(f"  {c['nodes']} node(s): {c['ops_per_sec']} ops/s ({c['ops_per_sec_per_node']} per node), node CPU per op "
            f"{c['node_ms_per_op']} ms, node cores {c['node_cores']}, PostgreSQL {c['postgres_cores']} cores "
            f"({c['postgres_ms_per_op']} ms per op)")


def _mem_gib() -> float:
    with open("/proc/meminfo") as f:
        return round(int(f.readline().split()[1]) / 2**20, 1)


def _kib(v) -> str:
    return "— KiB (joined on connect)" if v is None else f"{v} KiB"
