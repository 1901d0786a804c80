#!/usr/bin/env python3
"""Where the failover storm's surviving node and PostgreSQL spend their CPU (issue 27 §5).

Runs `scripts/bench storm` (give it `--systems cluster-2-failover`) with three additions, taken
over the storm and its settle, the same span as the row's `cpu.server_s`:

- node 2's CPU per thread (schedstat of /proc/PID/task/TID; the service loop is the main
  thread, the others are told apart by `--perf`: every thread's comm is `panes`);
- the CPU of each PostgreSQL process, a backend marked `node2:` when its client port is one
  of node 2's sockets (store, listener, heartbeat connections);
- `pg_stat_statements` (loaded into the bench's private PostgreSQL, which is restarted once
  for it): calls, total execution ms and rows per statement.

    python3 bench/failover_profile.py OUT.json [--perf OUT.perf] -- storm --quick --no-install \\
        --systems cluster-2-failover --n 10000 --panes-bin BIN/panes --out DIR

`--perf` records node 2 meanwhile (`perf record -g -F 499 -p PID`); then
`perf report -i OUT.perf --no-children -g none --sort pid` gives the share of each thread and
`--children --tid TID --sort sym` what each spends it on. The load generator is taken from
`--scratch` (default: .build-bench) when built there, as `scripts/bench` does.
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_lib import setup, storm, systems  # noqa: E402
from bench_lib.cli import main  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def _arguments(argv):
    rest = argv[argv.index("--") + 1:]
    own = argv[:argv.index("--")]
    out = own[0]
    perf = own[own.index("--perf") + 1] if "--perf" in own else None
    if "--scratch" in own:
        setup.SCRATCH = own[own.index("--scratch") + 1]
    return out, perf, rest


OUT, PERF, REST = _arguments(sys.argv[1:])
state = {"calls": 0}


def _psql(url, sql):
    return subprocess.run(["psql", url, "-AtF\t", "-c", sql], capture_output=True, text=True).stdout


_start = systems._PrivatePostgres.start


def start(self, allow_install):
    """The bench's private PostgreSQL, with pg_stat_statements loaded."""
    failed = _start(self, allow_install)
    if failed is None and "url" not in state:
        _psql(self.url, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        home_file = os.path.join(self.dir, "cluster-home")
        home = open(home_file).read().strip() if os.path.exists(home_file) else self.dir
        bindir = sorted(d for d in os.listdir("/usr/lib/postgresql"))[-1]
        pg_ctl = [f"/usr/lib/postgresql/{bindir}/bin/pg_ctl", "-D", f"{home}/data", "-w", "restart",
                  "-l", f"{home}/server.log"]
        if os.getuid() == 0:
            pg_ctl = ["runuser", "-u", "postgres", "--", *pg_ctl]
        subprocess.run(pg_ctl, check=True, capture_output=True)
        state["url"] = self.url
        _psql(self.url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    return failed


systems._PrivatePostgres.start = start


def _threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            ns = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        except OSError:
            continue
        out["loop" if int(tid) == pid else f"{tid} {comm}"] = ns
    return out


def _postgres():
    """pid -> (command line, CPU seconds) of every postgres process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = open(f"/proc/{entry}/cmdline").read().replace("\0", " ").strip()
            if not command.startswith("postgres"):
                continue
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(entry)] = (command, (int(fields[11]) + int(fields[12])) / TICK)
    return out


def _ports(pid):
    """The local ports of the process' TCP sockets."""
    lines = subprocess.run(["ss", "-tnp"], capture_output=True, text=True).stdout.splitlines()
    return {line.split()[3].rsplit(":", 1)[1] for line in lines if f"pid={pid}," in line}


_storm_threads = storm._threads


def threads(pid):
    """storm.py samples node 2's threads right before the "go" and after the settle."""
    state["calls"] += 1
    if state["calls"] == 1:
        state["ports"] = _ports(pid)
        _psql(state["url"], "SELECT pg_stat_statements_reset()")
        state["postgres"] = _postgres()
        state["threads"] = _threads(pid)
        if PERF:
            state["perf"] = subprocess.Popen(["perf", "record", "-g", "-F", "499", "-p", str(pid), "-o", PERF],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
    elif state["calls"] == 2:
        if PERF:
            state["perf"].send_signal(2)
            state["perf"].wait()
        after, before = _threads(pid), state["threads"]
        postgres = {}
        for p, (command, cpu) in _postgres().items():
            port = command.split("(")[1].split(")")[0] if "(" in command else None
            who = "node2 " if port in state["ports"] else ""
            postgres[f"{p} {who}{command[:80]}"] = round(cpu - state["postgres"].get(p, (command, 0.0))[1], 3)
        statements = _psql(state["url"], "SELECT calls, round(total_exec_time::numeric, 1), rows, "
                           "regexp_replace(left(query, 200), '\\s+', ' ', 'g') FROM pg_stat_statements "
                           "ORDER BY total_exec_time DESC LIMIT 40")
        with open(OUT, "w") as f:
            json.dump({"threads_s": {k: round((after.get(k, 0) - before.get(k, 0)) / 1e9, 3) for k in after},
                       "postgres_s": postgres,
                       "statements": [dict(zip(("calls", "total_ms", "rows", "query"), line.split("\t", 3)))
                                      for line in statements.splitlines()]}, f, indent=1)
    return _storm_threads(pid)


storm._threads = threads

if __name__ == "__main__":
    sys.exit(main(REST))
