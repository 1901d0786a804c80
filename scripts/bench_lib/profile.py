"""scripts/bench profile: where the Panes server spends its CPU (issue 14, item 3).

Two phases, each on a fresh server, with `perf record -g` attached to the
server for the measured part only:

- fanout: one writer, 10,000 observers, changes one at a time;
- connect: 10,000 idle scenes held, then one more connect after another
  (connect-under-load's probe, back to back).

For each phase it prints and keeps (profile.md in the run folder, and the
perf.data files beside it) the top entries by self time, per symbol (Swift
names demangled with `swift demangle --simplified`) and per shared object.
The event is `cycles` where the CPU exposes hardware counters, else the
software `cpu-clock` (virtual machines usually have none). perf comes from
Debian's `linux-perf`.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time

from . import log, procs, setup
from .catalog import all_systems
from .idle import run_connect_under_load
from .workloads import run_fanout

TOP = 25


def perf_event() -> str:
    r = subprocess.run(["perf", "stat", "-x,", "-e", "cycles", "--", "true"], capture_output=True, text=True)
    return "cycles" if r.returncode == 0 and "<not supported>" not in r.stderr else "cpu-clock"


def _demangle(text: str) -> str:
    tool = shutil.which("swift-demangle")
    if not tool:
        return text
    r = subprocess.run([tool, "--simplified"], input=text, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else text


def top(data: str, sort: str, limit: int = TOP) -> list[tuple[float, str]]:
    r = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "--stdio", "-g", "none",
                        "--percent-limit", "0.2"], capture_output=True, text=True)
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.*\S)", line)
        if m:
            rows.append((float(m.group(1)), m.group(2).strip()))
    names = _demangle("\n".join(name for _, name in rows)).splitlines()
    return [(pct, name) for (pct, _), name in zip(rows, names)][:limit]


@contextlib.contextmanager
def recording(path: str, event: str, pid: int):
    """perf record -g of `pid` for the body of the with-block."""
    proc = procs.start(["perf", "record", "-g", "-e", event, "-F", "999", "-p", str(pid), "-o", path],
                       log=path + ".log")
    time.sleep(0.5)  # perf attaches to every thread before the phase begins
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            procs.stop(proc)
        procs.stop(proc)


def run_profile(ctx, mode: str, out_dir: str) -> int:
    if setup.ensure_packages(["linux-perf"], ctx.allow_install) or not shutil.which("perf"):
        log("perf is not available (Debian's linux-perf)")
        return 1
    panes = all_systems()["panes"]
    panes.prepare(ctx)
    if panes.unavailable:
        log(f"Panes: unavailable: {panes.unavailable}")
        return 1
    event = perf_event()
    n = 20 if mode == "smoke" else 10000
    writes = {"smoke": 10, "quick": 100, "full": 300}[mode]
    ctx.probe_count, ctx.probe_gap, ctx.probe_tail = {"smoke": 5, "quick": 100, "full": 200}[mode], 0.01, 0.01
    phases = []

    for name, run in (("fanout", lambda: run_fanout(ctx, panes, n, writes, 5, 1)),
                      ("connect", lambda: run_connect_under_load(ctx, panes, n))):
        data = os.path.join(out_dir, f"perf-{name}.data")
        ctx.measure_hook = lambda pid, data=data: recording(data, event, pid)
        log(f"profile: {name}, N={n:,}, perf record -g -e {event}")
        try:
            row = run()
        finally:
            ctx.measure_hook = None
            procs.stop_all()
        phases.append((name, row, top(data, "symbol"), top(data, "dso", 10)))

    lines = [f"# Where Panes spends its CPU ({mode}, {time.strftime('%Y-%m-%d %H:%M')})", "",
             f"`perf record -g -e {event} -F 999 -p <server>` over the measured phase only; top entries by "
             f"self time (`perf report --no-children --sort symbol`, then `--sort dso`). Server: {ctx.panes_bin}.", ""]
    for name, row, symbols, dsos in phases:
        what = (f"fan-out to {n:,} observers, {writes} changes one at a time" if name == "fanout" else
                f"{ctx.probe_count} connects one after another with {n:,} idle scenes held")
        lat = row.get("latency_ms") or {}
        extra = (f"median {lat.get('p50')} ms to the last observer" if name == "fanout" else
                 f"server CPU per connect median {(row.get('connect_cpu_ms') or {}).get('p50')} ms")
        lines += [f"## {name}: {what} ({row['status']}; {extra})", "", "| self % | symbol |", "|---|---|"]
        lines += [f"| {pct:.2f} | `{sym.replace('|', '/')[:140]}` |" for pct, sym in symbols]
        lines += ["", "| self % | shared object |", "|---|---|"]
        lines += [f"| {pct:.2f} | `{d}` |" for pct, d in dsos]
        lines.append("")
    text = "\n".join(lines)
    with open(os.path.join(out_dir, "profile.md"), "w") as f:
        f.write(text)
    print(text)
    log(f"wrote {os.path.relpath(out_dir, os.getcwd())}/profile.md and perf-*.data "
        f"(`perf report -i …` for the call graphs)")
    return 0
