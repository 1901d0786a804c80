#!/usr/bin/env python3
"""Instruction profiles of the Panes server (issue 14): callgrind over the fan-out and connect paths.

perf's samples (`scripts/bench profile`) move with whatever else the machine runs; callgrind
counts the instructions the server executes, which repeat from run to run on a busy machine.
It sees user space only: time the kernel spends in poll(), epoll or TCP is not counted (see
`scripts/bench profile` for that).

Each phase starts a fresh `panes serve` (release build, SQLite store, default event loop, the
limits scripts/bench lifts) under `valgrind --tool=callgrind --instr-atstart=no`, so connecting
the held scenes runs uninstrumented; instrumentation is switched on (`callgrind_control -i on`)
for the measured part only, and the profile dumped (`callgrind_control -d`) at its end:

  fanout   N observers of one preference; after `go`, --warmup + --changes changes, one at a time
           (panes-load fanout: each waits until every observer has it)
  connect  N idle scenes held (100 per user); then --connects connects one after another
           (panes-load probe: TCP, WebSocket upgrade, the Panes `connect`, its reply)
  storm    issue 27's reconnect storm: N scenes (100 per user) connect to a server started
           natively, which is stopped (SIGTERM: it drains; --restart kill: kill -9) while they are
           connected; the server is started again under
           callgrind on the same data, loads the N sessions, and the N windows resume at once
           (panes-load storm: TCP, upgrade, `connect` with each session's identifier and secret,
           256 in flight); measured from the first resume until the last is answered, plus a
           second for the store's writes
  raw-storm the same N connects (no sessions) to panes-raw-broadcast on the libev loop: what the
           transport alone costs, for the ratio
  acklat   issue 14's durable writes (`scripts/bench acklat`): --writers writers, each its own user
           writing its own key, open loop at --rate writes a second in all for --seconds (panes-load
           writes); the store is --store (memory: what the hub, the runtime and the store thread
           cost without a disk; sqlite), both threads counted
  authflood-rs256, authflood-es256
           `--auth jwt`; --connects attempts, 10 a second, from one address, each a new connection
           sending a token whose RS256 (ES256) signature is random (panes-load authflood): what
           one attempt of a flood costs the server (issue 26, item 5)

With --cpu-split or --strace nothing runs under valgrind: --cpu-split reads the server's user and
system CPU from /proc around each measured part; --strace attaches `strace -c -f` to the server for
it and gives each system call's count per unit (per connect, per change, …).

Then `callgrind_annotate --inclusive=no` (self instructions, Ir) per function, Swift names
through `swift demangle --simplified`, summed per shared object too. Prints Markdown and keeps
the callgrind.out files (open them with callgrind_annotate or kcachegrind).

Usage: bench/callgrind.py [--bin .build-release/release] [--load PANES_LOAD] [--n 10000] [--changes 100]
                          [--warmup 5] [--connects 100] [--flood-rate 10] [--writers 10] [--rate 200] [--seconds 10]
                          [--store memory] [--phases fanout,connect,storm,raw-storm,acklat,authflood-rs256,…]
                          [--cpu-split | --strace] [--out DIR]
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import queue
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What scripts/bench lifts (scripts/bench_lib/systems.py): a benchmark is not rate limited.
SETTINGS = {"maxSessionsPerUser": 100000, "rateLimitPerSecond": 100000, "rateLimitBurst": 100000,
            "maxOutboundQueue": 100000}
TOP = 25


def _setting(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, int(value)


class Lines:
    """A process's stdout as JSON events, read on a thread."""

    def __init__(self, proc):
        self.proc, self.items = proc, queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.items.put(json.loads(line))
            except json.JSONDecodeError:
                pass
        self.items.put(None)

    def wait(self, event, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self.items.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise SystemExit(f"timed out waiting for `{event}` from {self.proc.args[:2]}") from None
            if item is None:
                raise SystemExit(f"{self.proc.args[:2]} ended before `{event}`")
            if item.get("event") == event:
                return item

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()


def start_server(args, workdir, out_file, instrumented=True, raw=False, extra=()):
    config = os.path.join(workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"settings": {**SETTINGS, **dict(args.setting)}}, f)
    valgrind = [] if args.cpu_split or args.strace or not instrumented else [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_file}"]
    if raw:
        argv = [*valgrind, os.path.join(args.bin, "panes-raw-broadcast"), "--host", "127.0.0.1", "--port", "0",
                "--event-loop", "libev"]
    else:
        argv = [*valgrind, os.path.join(args.bin, "panes"), "serve", "--host", "127.0.0.1", "--port", "0",
                "--data", os.path.join(workdir, "data"), "--config", config, "--log-level", "warning", *extra]
    print("$ " + " ".join(argv), file=sys.stderr)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(os.path.join(workdir, "valgrind.log"), "w"),
                            text=True)
    banner = proc.stdout.readline()
    match = re.search(r"listening on http://[0-9.]+:(\d+)", banner)
    if not match:
        raise SystemExit(f"the server did not start: {banner!r} (see {workdir}/valgrind.log)")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return proc, int(match.group(1))


def load(args, *argv):
    full = [args.load or os.path.join(args.bin, "panes-load"), *argv]
    print("$ " + " ".join(full), file=sys.stderr)
    proc = subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return Lines(proc)


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_times(pid):
    """The process's (user, system) CPU seconds so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def thread_times(pid):
    """Per thread, the service loop (the main thread) apart from the others together: user and
    system CPU seconds, minor page faults, schedstat run time in seconds, voluntary and
    involuntary context switches, so far."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run = int(f.read().split()[0]) / 1e9
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        name = "loop" if int(tid) == pid else "others"
        v = [int(fields[11]) / TICKS, int(fields[12]) / TICKS, int(fields[7]), run,
             int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"])]
        out[name] = [a + b for a, b in zip(out.get(name, [0] * len(v)), v)]
    return out


class Measure:
    """The measured part: callgrind's instrumentation on, or (--cpu-split) the server's user and
    system CPU read from /proc around it."""

    def __init__(self, args, pid):
        self.args, self.pid, self.split, self.syscalls, self.threads = args, pid, None, None, None

    def __enter__(self):
        if self.args.strace:
            handle, self.strace_file = tempfile.mkstemp(prefix="panes-strace-")
            os.close(handle)  # strace -o writes it again
            self.strace = subprocess.Popen(["strace", "-c", "-f", "-p", str(self.pid), "-o", self.strace_file],
                                           stderr=subprocess.DEVNULL)
            time.sleep(1)  # attached to every thread before the measured part starts
        if self.args.perf:
            self.perf_file = os.path.join(self.args.out_dir, f"perf.{self.args.phase}.data")
            self.perf = subprocess.Popen(["perf", "record", "-g", "-e", "cpu-clock", "-F", "4999", "--per-thread", "-t",
                                          str(self.pid), "-o", self.perf_file],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)  # attached before the measured part starts
        if self.args.cpu_split:
            self.before = cpu_times(self.pid)
            self.threads_before = thread_times(self.pid)
        elif not self.args.strace:
            subprocess.run(["callgrind_control", "-i", "on", str(self.pid)], check=True, capture_output=True)
        return self

    def __exit__(self, *exc):
        if self.args.cpu_split:
            after = cpu_times(self.pid)
            self.split = (after[0] - self.before[0], after[1] - self.before[1])
            threads = thread_times(self.pid)
            self.threads = {name: [a - b for a, b in zip(v, self.threads_before.get(name, [0] * len(v)))]
                            for name, v in threads.items()}
        if self.args.perf:
            self.perf.send_signal(signal.SIGINT)
            self.perf.wait(timeout=120)
        if self.args.strace:
            self.strace.send_signal(signal.SIGINT)  # detaches and writes its summary
            self.strace.wait(timeout=60)
            self.syscalls = read_strace_summary(self.strace_file)
            os.unlink(self.strace_file)
        if not self.args.cpu_split and not self.args.strace:
            subprocess.run(["callgrind_control", "-d", str(self.pid)], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-i", "off", str(self.pid)], check=True, capture_output=True)


def read_strace_summary(path):
    """{system call: calls} from `strace -c`'s table."""
    calls = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            # % time, seconds, usecs/call, calls, [errors,] syscall
            if len(fields) >= 5 and fields[3].isdigit() and not fields[-1].startswith("total"):
                calls[fields[-1]] = int(fields[3])
    return calls


def syscall_table(calls, per):
    lines = [f"| system call | calls | per {per[0]} |", "|---|---|---|"]
    for name, count in sorted(calls.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {count:,} | {count / per[1]:.3f} |")
    return "\n".join(lines) + "\n"


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def go_and_measure(args, pid, gen, settle, timeout=1800):
    """Sends `go` and waits for the generator's result with the server measured, `settle` seconds
    more for the work its last messages left; then ends the generator. (result, Measure)"""
    with Measure(args, pid) as measured:
        gen.send("go")
        result = gen.wait("result", timeout)
        time.sleep(settle)
    gen.proc.stdin.close()
    gen.proc.wait(timeout=60)
    return result, measured


def fanout(args, workdir, out_file):
    server, port = start_server(args, workdir, out_file)
    try:
        gen = load(args, "fanout", "--protocol", "panes", "--port", str(port), "--n", str(args.n),
                   "--writes", str(args.changes), "--warmup", str(args.warmup), "--inflight", "1",
                   "--payload", "64", "--wait-go", "--quiet", "--timeout", "1800", "--write-timeout", "120")
        ready = gen.wait("ready", 1800)
        time.sleep(2)  # the server finishes what connecting the observers started
        result, measured = go_and_measure(args, server.pid, gen, 0, timeout=7200)
        return {"ready": ready.get("ready"), "lost": result.get("lost"),
                "changes": args.warmup + args.changes, "split": measured.split, "syscalls": measured.syscalls,
                "threads": measured.threads}
    finally:
        stop(server)


def connect(args, workdir, out_file):
    server, port = start_server(args, workdir, out_file)
    try:
        held = load(args, "connect", "--protocol", "panes", "--port", str(port), "--n", str(args.n),
                    "--users", str(max(1, args.n // 100)), "--hold", "-1", "--concurrency", "256",
                    "--quiet", "--timeout", "1800")
        ready = held.wait("ready", 1800)
        probe = load(args, "probe", "--protocol", "panes", "--port", str(port), "--n", str(args.connects),
                     "--user", "probe", "--hold", "-1", "--quiet", "--timeout", "1800")
        probe.wait("ready", 300)
        time.sleep(2)  # the server finishes what connecting the held scenes started (store writes)
        with Measure(args, server.pid) as measured:
            for _ in range(args.connects):
                probe.send("go")
                probe.wait("connected", 300)
            time.sleep(1)  # the work a connect leaves for after its reply (the store's commit) counts
        for gen in (probe, held):
            gen.proc.stdin.close()
            gen.proc.wait(timeout=120)
        return {"ready": ready.get("ready"), "connects": args.connects, "split": measured.split, "syscalls": measured.syscalls,
                "threads": measured.threads}
    finally:
        stop(server)


def storm(args, workdir, out_file, raw=False):
    sessions = os.path.join(workdir, "sessions.txt")
    if not raw:
        server, port = start_server(args, workdir, out_file, instrumented=False)
        try:
            made = load(args, "connect", "--protocol", "panes", "--port", str(port), "--n", str(args.n),
                        "--users", str(max(1, args.n // 100)), "--sessions-out", sessions, "--hold", "-1",
                        "--quiet", "--timeout", "1800")
            made.wait("ready", 1800)
            time.sleep(1)  # the sessions are written
            if args.restart == "kill":
                server.kill()
                server.wait()
        finally:
            stop(server)  # SIGTERM: the server drains, as in a restart
            made.proc.stdin.close()
            made.proc.wait(timeout=120)
    server, port = start_server(args, workdir, out_file, raw=raw)
    try:
        resume = ["--sessions", sessions] if not raw else []
        gen = load(args, "storm", "--protocol", "raw" if raw else "panes", "--port", str(port), "--n", str(args.n),
                   *resume, "--interval", "0", "--wait-go", "--hold", "-1", "--quiet", "--timeout", "3600",
                   "--connect-timeout", "600")
        gen.wait("ready", 600)
        time.sleep(2)  # a server under callgrind finishes starting (loading the sessions)
        with Measure(args, server.pid) as measured:
            gen.send("go")
            stormed = gen.wait("stormed", 3600)
            time.sleep(1)  # the store's writes the resumes started count
        gen.proc.stdin.close()
        gen.proc.wait(timeout=120)
        return {"resumed": stormed.get("resumed"), "forked": stormed.get("forked"),
                "failed": stormed.get("failed"), "split": measured.split, "syscalls": measured.syscalls,
                "threads": measured.threads}
    finally:
        stop(server)


def acklat(args, workdir, out_file):
    server, port = start_server(args, workdir, out_file, extra=["--store", args.store])
    try:
        gen = load(args, "writes", "--protocol", "panes", "--port", str(port), "--n", str(args.writers),
                   "--user", "writer", "--users", str(args.writers), "--key-path", "bench", "--rate", f"{args.rate:g}",
                   "--inflight", "32", "--keys", "0", "--warmup-time", "0.5", "--duration", f"{args.seconds:g}",
                   "--payload", "64", "--wait-go", "--quiet", "--timeout", "1800", "--write-timeout", "120")
        gen.wait("ready", 300)
        time.sleep(1)
        result, measured = go_and_measure(args, server.pid, gen, 0.5)  # the last commits' reports
        return {"acked": result.get("acked") or 0, "lost": result.get("lost"), "sent": result.get("sent"),
                "ack_ns": result.get("ack_ns"), "split": measured.split, "syscalls": measured.syscalls,
                "threads": measured.threads}
    finally:
        stop(server)


def authflood(args, workdir, out_file, kind):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from bench_lib.authflood import WORKSPACE, prepare_keys
    keys = prepare_keys(workdir)
    server, port = start_server(args, workdir, out_file, extra=["--auth", "jwt", "--jwt-keys", keys["file"]])
    try:
        prefix, sig_bytes = keys["floods"][kind]
        flood = load(args, "authflood", "--protocol", "panes", "--port", str(port), "--n", str(args.connects),
                     "--rate", f"{args.flood_rate:g}", "--duration", str(args.connects / args.flood_rate + 5), "--forge", prefix, "--forge-bytes", str(sig_bytes), "--workspace", WORKSPACE,
                     "--sources", "127.0.0.2", "--wait-go", "--hold", "-1", "--quiet", "--timeout", "1800")
        flood.wait("ready", 300)
        time.sleep(1)
        result, measured = go_and_measure(args, server.pid, flood, 0.5)  # the last closes
        return {"attempts": result.get("attempts"), "limited": (result.get("limited") or 0) + (result.get("turned_away") or 0),
                "checked": result.get("checked"),
                "split": measured.split, "syscalls": measured.syscalls,
                "threads": measured.threads}
    finally:
        stop(server)


def demangle(names):
    tool = shutil.which("swift-demangle")
    if not tool or not names:
        return names
    r = subprocess.run([tool, "--simplified"], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.splitlines()
    return out if r.returncode == 0 and len(out) == len(names) else names


def annotate(path):
    """(total Ir, [(Ir, function, object)]) of every function, self instructions."""
    r = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", path],
                       capture_output=True, text=True, check=True)
    total, rows = 0, []
    for line in r.stdout.splitlines():
        if line.startswith("-- Auto-annotated source"):
            break
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS", line) or re.match(r"\s*([\d,]+)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)\s*$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        where = m.group(2)
        obj = ""
        o = re.search(r"\s\[(.*)\]$", where)
        if o:
            obj, where = os.path.basename(o.group(1)), where[: o.start()]
        if ":" not in where:
            continue
        function = where.split(":", 1)[1]
        rows.append((ir, function, obj or "panes"))  # only the server's own code has its sources named
    names = demangle([f for _, f, _ in rows])
    return total, [(ir, name, obj) for (ir, _, obj), name in zip(rows, names)]


def perf_summary(path, top=30):
    """The loop thread's cpu-clock samples: kernel against user space, and the top symbols."""
    r = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "sym", "--stdio", "-g", "none",
                        "--percent-limit", "0.5"], capture_output=True, text=True)
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[([k.])\]\s+(.*\S)", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3)))
    counted = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "sym", "--stdio", "-g", "none",
                              "--percent-limit", "0"], capture_output=True, text=True).stdout
    kernel = user = 0.0
    for line in counted.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[([k.])\]", line)
        if m:
            if m.group(2) == "k":
                kernel += float(m.group(1))
            else:
                user += float(m.group(1))
    # Inclusive kernel time by way in: each system call's entry point and the page-fault handler.
    children = subprocess.run(["perf", "report", "-i", path, "--children", "--sort", "sym", "--stdio", "-g", "none",
                               "--percent-limit", "0.1"], capture_output=True, text=True).stdout
    ways = []
    for line in children.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[k\]\s+(__x64_sys_\w+|asm_exc_page_fault|asm_sysvec_\w+|"
                     r"asm_common_interrupt|irq_exit_rcu|__do_softirq|handle_softirqs)\s*$", line)
        if m:
            ways.append((float(m.group(1)), m.group(2)))
    names = demangle([name for _, _, name in rows]) if rows else []
    lines = [f"The loop thread's cpu-clock samples (`{path}`): kernel {kernel:.1f} %, user space {user:.1f} %.", "",
             "By way into the kernel (inclusive): " + ", ".join(f"`{w}` {pct:.1f} %" for pct, w in ways) + ".", "",
             "| % | where | symbol |", "|---|---|---|"]
    for (pct, where, _), name in list(zip(rows, names))[:top]:
        short = name.replace("|", "/")
        lines.append(f"| {pct:.2f} | {'kernel' if where == 'k' else 'user'} | `{short[:110]}` |")
    return "\n".join(lines) + "\n"


def report(name, what, per, total, rows):
    lines = [f"### {name}: {what}", "",
             f"{total:,} instructions in the measured part, {total / per[1]:,.0f} per {per[0]}.", "",
             "| self Ir % | function | object |", "|---|---|---|"]
    for ir, function, obj in rows[:TOP]:
        short = function.replace("|", "/")
        if len(short) > 110:
            short = short[:107] + "…"
        lines.append(f"| {100 * ir / total:.2f} | `{short}` | {obj} |")
    by_object = {}
    for ir, _, obj in rows:
        by_object[obj or "?"] = by_object.get(obj or "?", 0) + ir
    lines += ["", "By object: " + ", ".join(f"`{o}` {100 * ir / total:.1f} %"
                                            for o, ir in sorted(by_object.items(), key=lambda kv: -kv[1])[:8]), ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, ".build-release", "release"),
                   help="folder with release `panes` and `panes-load`")
    p.add_argument("--load", default=None, help="the panes-load to drive it with (default: the one in --bin)")
    p.add_argument("--n", type=int, default=10000, help="observers (fanout), idle scenes held (connect)")
    p.add_argument("--changes", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--connects", type=int, default=100)
    p.add_argument("--flood-rate", type=float, default=10,
                    help="authflood phases: attempts a second (10: the burst and the refills are a fifth of them; "
                         "700, the bench row's rate: nearly all are turned away)")
    p.add_argument("--writers", type=int, default=10, help="acklat: writers, each its own user")
    p.add_argument("--rate", type=float, default=200, help="acklat: writes a second in all, open loop")
    p.add_argument("--seconds", type=float, default=10, help="acklat: seconds measured")
    p.add_argument("--store", default="memory", help="acklat: the server's --store (memory, sqlite)")
    p.add_argument("--phases", default="fanout,connect",
                   help="fanout, connect, storm, raw-storm, acklat, authflood-rs256, authflood-es256")
    p.add_argument("--restart", choices=["drain", "kill"], default="drain",
                   help="storm: how the server stops before its windows come back: SIGTERM (drain) or kill -9")
    p.add_argument("--cpu-split", action="store_true",
                   help="no valgrind: run natively and report the server's user and system CPU over each measured part")
    p.add_argument("--strace", action="store_true",
                   help="no valgrind: run natively with `strace -c -f` attached to the server for each measured "
                        "part, and report its system calls (per connect, per change, …); strace slows the server, "
                        "so this gives no CPU figures (not with --cpu-split)")
    p.add_argument("--perf", action="store_true",
                   help="as --cpu-split, and `perf record -e cpu-clock` of the service loop (the main thread) "
                        "over each measured part: its samples in the kernel and in user space, and the top symbols "
                        "(perf.PHASE.data kept in --out)")
    p.add_argument("--setting", action="append", default=[], type=_setting, metavar="NAME=VALUE",
                   help="a server setting for the run, beside the benchmark's own (e.g. sqliteCacheKiB=512); repeatable")
    p.add_argument("--out", default=None, help="where callgrind.out files go (default: a new temporary folder)")
    args = p.parse_args()
    if args.strace and (args.cpu_split or args.perf):
        p.error("--strace slows the server: measure its CPU (--cpu-split, --perf) in another run")
    args.cpu_split = args.cpu_split or args.perf
    out = args.out or tempfile.mkdtemp(prefix="panes-callgrind-")
    os.makedirs(out, exist_ok=True)
    args.out_dir = out
    sections = []
    for phase in args.phases.split(","):
        args.phase = phase
        workdir = tempfile.mkdtemp(prefix=f"panes-callgrind-{phase}-")
        out_file = os.path.join(out, f"callgrind.{phase}.out")
        started = time.monotonic()
        if phase == "fanout":
            facts = fanout(args, workdir, out_file)
            what = f"{facts['changes']} changes one at a time to {args.n:,} observers ({facts['lost'] or 0} lost)"
            per = ("change", facts["changes"])
        elif phase == "connect":
            facts = connect(args, workdir, out_file)
            what = f"{args.connects} connects one after another with {args.n:,} idle scenes held"
            per = ("connect", args.connects)
        elif phase in ("storm", "raw-storm"):
            facts = storm(args, workdir, out_file, raw=phase == "raw-storm")
            what = (f"{args.n:,} windows resuming at once after a restart ({facts['resumed']} resumed, "
                    f"{facts['forked']} forked, {facts['failed']} failed)" if phase == "storm" else
                    f"{args.n:,} connects at once to the raw lws server, libev loop ({facts['failed']} failed)")
            per = ("connect", args.n)
        elif phase == "acklat":
            facts = acklat(args, workdir, out_file)
            what = (f"{facts['acked']} writes acknowledged ({facts['lost'] or 0} lost) from {args.writers} writers, "
                    f"open loop at {args.rate:g}/s for {args.seconds:g} s, {args.store} store")
            per = ("acknowledged write", max(1, facts["acked"]))
        elif phase in ("authflood-rs256", "authflood-es256"):
            facts = authflood(args, workdir, out_file, phase.split("-")[1])
            what = (f"{facts['attempts']} forged {phase.split('-')[1].upper()} tokens from one address, a new "
                    f"connection each ({facts['limited']} refused unchecked, {facts['checked']} checked)")
            per = ("answered attempt", max(1, (facts["limited"] or 0) + (facts["checked"] or 0)))
        else:
            raise SystemExit(f"unknown phase {phase}")
        print(f"{phase}: {time.monotonic() - started:.0f} s", file=sys.stderr)
        if args.strace:
            sections.append(f"### {phase}: {what}\n\n" + syscall_table(facts["syscalls"] or {}, per))
            continue
        if args.cpu_split:
            user, system = facts["split"]
            rows = [f"| {name} | {u:.2f} | {s:.2f} | {run:.3f} | {faults:,} ({faults / per[1]:.2f} per {per[0]}) "
                    f"| {vol:,} · {invol:,} |"
                    for name, (u, s, faults, run, vol, invol) in sorted((facts.get("threads") or {}).items())]
            sections.append(f"### {phase}: {what}\n\nserver CPU: user {user:.2f} s, system {system:.2f} s "
                            f"({100 * system / max(user + system, 1e-9):.0f} % in the kernel)\n\n"
                            "| thread | user s | system s | run s (schedstat) | minor faults | sleeps · preempted |\n"
                            "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
            if args.perf:
                sections.append(perf_summary(os.path.join(out, f"perf.{phase}.data")))
            continue
        # callgrind_control -d writes <file>.1 (the dump), the end of the run writes <file>.
        dump = out_file + ".1" if os.path.exists(out_file + ".1") else out_file
        total, rows = annotate(dump)
        sections.append(report(phase, what, per, total, rows))
    text = "\n".join(sections)
    with open(os.path.join(out, "callgrind.md"), "w") as f:
        f.write(text)
    print(text)
    print(f"kept in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
