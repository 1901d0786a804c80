"""storm (issue 27): every window of a server comes back at once after a restart.

Panes: N windows (scenes, 100 per user) connect and keep their sessions' identifiers and
secrets (`panes-load connect --sessions-out`); the server is restarted (SIGTERM, which drains,
or kill -9, by system) and started again on the same data, so it loads the N sessions; then the
N windows resume at once: a real `connect` each with its session's identifier and secret
(`panes-load storm --sessions`), paced like every connect here (256 in flight per process). A
window that gets a new session (`created: true`) instead of its own counts as forked.

Failover (`cluster-2-failover`): two nodes on one PostgreSQL database; the N windows are on
node 1, which is killed (kill -9); at once they all resume through node 2, which must first see
node 1 is gone (today: its lease running out, `nodeLeaseMs`) before it takes their sessions
over. The server measured is node 2.

raw lws and nchan have nothing to resume: the same N connect at once to a fresh server.

Measured, from the "go" until the last window is back: the time (all back), each resume's
latency (its TCP connect until its reply), the server's CPU (schedstat, every thread) per
resume, once over the storm itself and once with the work it leaves for after (a settle, the
store's writes), and a normal client's round trips and durable writes meanwhile (connected
before the storm, a round every 10 ms: a Panes `ping` request and a `setPreference`; others
a WebSocket ping), beside the same client's before the storm. Memory per resumed scene =
(VmRSS after the storm − VmRSS before it) ÷ resumed: the sessions are loaded before, so this
is the scenes' and connections' share only.

Past the 20,000 open files a process may hold, the windows are spread over several generator
processes (each its own source address), and the normal client is in the first.
"""
from __future__ import annotations

import os
import signal
import time

from . import log, procs
from .cluster import postgres_cpu_seconds
from .loadgen import Generator, hold, release, source_address, split
from .workloads import _ms, _row, measuring, settle

NORMAL_INTERVAL_MS = 10
TICKS = os.sysconf("SC_CLK_TCK")
BEFORE_SECONDS = 0.5  # the normal client's rounds before the storm, for comparison
# Making the sessions is setting up, not what is measured: on a machine busy with other work a
# new session's durable commit can take longer than a measured connect's 10 s.
SETUP_CONNECT_TIMEOUT = 60


def run_storm(ctx, system, n: int) -> dict:
    row = _row("storm", n, system)
    workdir = ctx.run_dir(f"storm-{system.name}-{n}")
    sessions = os.path.join(workdir, "sessions.txt") if system.protocol == "panes" else None
    restart = getattr(system, "restart", None)
    facts: dict = {}
    gens = []
    if restart == "failover":
        running, port, target = _fail_over(ctx, system, n, workdir, sessions, facts)
    else:
        if sessions:
            _make_sessions(ctx, system, n, workdir, sessions, restart, facts)
        t0 = time.monotonic()
        running = system.start(ctx, workdir)
        facts["start_seconds"] = round(time.monotonic() - t0, 3)
        port, target = running.port, running.proc
    try:
        settle()
        gens = _storm_generators(ctx, system, port, n, workdir, sessions)
        readies = [g.wait("ready", ctx.timeout) for g in gens]
        if not all(readies):
            raise RuntimeError("the normal client did not connect")
        time.sleep(BEFORE_SECONDS)
        base = procs.memory_kb(target.pid)
        c0, s0 = procs.cpu_ns(target.pid), procs.cpu_seconds(target.pid)
        pg0 = postgres_cpu_seconds() if restart == "failover" else None
        threads0 = _threads(target.pid)
        sched0 = _sched_all(target.pid, gens)
        phase = procs.Phase()
        with measuring(ctx, target.pid):
            for g in gens:
                g.send("go")
            stormed = [g.wait("stormed", ctx.timeout) for g in gens]
            c1 = procs.cpu_ns(target.pid)
            sched1 = _sched_all(target.pid, gens)
            wall = time.monotonic() - phase.t0
            settle()  # what the storm left for after: the store's writes
            c2, s2 = procs.cpu_ns(target.pid), procs.cpu_seconds(target.pid)
            threads2 = _threads(target.pid)
            pg2 = postgres_cpu_seconds() if restart == "failover" else None
        phase.end()
        mem = procs.memory_kb(target.pid)
        alive = target.poll() is None
        for g in gens:
            g.close_stdin()
        results = [g.finish(30) for g in gens]
    finally:
        for g in gens:
            procs.stop(g.proc)
        running.stop()

    got = [s for s in stormed if s]
    resumed = sum(s.get("resumed", 0) for s in got)
    forked = sum(s.get("forked", 0) for s in got)
    failed = sum(s.get("failed", 0) for s in got)
    first = results[0] or {}
    gen_cpu = round(sum(s.get("cpu_storm_s", 0) for s in got), 3)
    per = lambda ns: round(ns / 1e3 / n, 1) if n else None  # noqa: E731 - µs per window
    row.update({
        "processes": len(gens),
        "connected": resumed,
        "resumed": resumed, "forked": forked, "failed": failed,
        "restart": restart or "none (a fresh server: nothing to resume)",
        **facts,
        "storm_seconds": max((s.get("storm_seconds") or 0 for s in got), default=None),
        "storm_wall_seconds": round(wall, 3),
        # One process: exact. Several: the worst process's figures (conservative).
        "latency_ms": _ms(max((r.get("connect_latency_ns") or {} for r in results if r),
                              key=lambda h: h.get("p99", 0), default=None)),
        "normal_ping_ms": _ms(first.get("normal_ping_ns")),
        "normal_ping_before_ms": _ms(first.get("normal_ping_before_ns")),
        "normal_write_ms": _ms(first.get("normal_write_ns")),
        "normal_write_before_ms": _ms(first.get("normal_write_before_ns")),
        "memory": {"base_rss_kb": base["rss_kb"], "rss_kb": mem["rss_kb"],
                   "per_conn_kb": round((mem["rss_kb"] - base["rss_kb"]) / resumed, 2) if resumed else None},
        "cpu": {"server_s": round((c2 - c0) / 1e9, 3), "storm_server_s": round((c1 - c0) / 1e9, 3),
                "server_us_per_resume": per(c2 - c0), "storm_server_us_per_resume": per(c1 - c0),
                "server_ticks_s": round(s2 - s0, 2), "generator_s": gen_cpu,
                # The service loop's share, and the other threads' (the store thread above all).
                "threads_s": {name: round((threads2.get(name, 0) - threads0.get(name, 0)) / 1e9, 3)
                              for name in threads2},
                **({"postgres_s": round(pg2 - pg0, 3)} if pg0 is not None else {}),
                **phase.background((c2 - c0) / 1e9, gen_cpu)},
        "sched": _sched_delta(sched0, sched1),
        "generator": results,
    })
    problems = []
    if forked:
        problems.append(f"{forked} windows got a new session instead of resuming their own")
    if failed or resumed < n:
        problems.append(f"{resumed} of {n} back: {next((s.get('first_error') for s in got if s.get('first_error')), '')}")
    if len(got) < len(gens) or not alive:
        row["status"], row["reason"] = "failed", "server exited" if not alive else "a generator did not report"
    elif problems:
        row["status"], row["reason"] = "partial", "; ".join(problems)
    c = row["cpu"]
    lat = row["latency_ms"] or {}
    ping = row["normal_ping_ms"] or {}
    log(f"  {resumed:,} back in {row['storm_seconds']} s ({forked} forked, {failed} failed), resume p50 "
        f"{lat.get('p50')} · p99 {lat.get('p99')} ms, server {c['server_us_per_resume']} µs per window "
        f"({c['storm_server_us_per_resume']} during), normal round trip p99 {ping.get('p99')} ms")
    return row


def _connect_windows(ctx, system, port, n, workdir, sessions):
    """N windows connect to `port` and are held there; their sessions go to `sessions`."""
    settle()
    gens, readies = hold(ctx, system, port, n, workdir, name="create", sessions_out=sessions,
                         connect_timeout=SETUP_CONNECT_TIMEOUT)
    made = sum(r["ready"] for r in readies if r)
    if made < n:
        raise RuntimeError(f"only {made} of {n} windows connected before the server went")
    settle()  # their sessions are written
    return gens, readies


def _join_sessions(sessions, n) -> None:
    """Every generator process's sessions in one file, in the order the storm's processes take them."""
    with open(sessions, "w") as out:
        for k in range(len(split(n))):
            with open(f"{sessions}.{k}") as part:
                out.write(part.read())


def _make_sessions(ctx, system, n, workdir, sessions, restart, facts) -> None:
    """N windows connect and keep their sessions; then the server restarts as `restart` says."""
    running = system.start(ctx, workdir)
    try:
        gens, readies = _connect_windows(ctx, system, running.port, n, workdir, sessions)
        t0 = time.monotonic()
        if restart == "kill":
            os.killpg(running.pid, signal.SIGKILL)
            running.proc.wait(timeout=30)
        else:
            os.killpg(running.pid, signal.SIGTERM)  # drains: tells every window to come back
            running.proc.wait(timeout=60)
            facts["drain_seconds"] = round(time.monotonic() - t0, 3)
        release(gens, readies)
    finally:
        running.stop()
    _join_sessions(sessions, n)


def _threads(pid: int) -> dict[str, int]:
    """CPU of the service loop (the main thread) and of every other thread together (the store
    thread; a cluster node's listener and heartbeat), schedstat nanoseconds (from `_sched`)."""
    per_thread = _sched(pid)
    loop = per_thread.pop("loop", [0])[0]
    return {"loop": loop, "others": sum(v[0] for v in per_thread.values())}


def _sched_all(pid: int, gens) -> dict:
    """Per thread of the server (by name) and per generator: schedstat's run time, run-queue
    wait and timeslices, the voluntary and involuntary context switches, the minor page faults
    and the user and system CPU; with the kernel's listen-queue counters (TcpExt
    ListenOverflows, ListenDrops)."""
    out = {f"server:{k}": v for k, v in _sched(pid).items()}
    for k, g in enumerate(gens):
        for name, v in _sched(g.proc.pid).items():
            out[f"generator{k}:{name}"] = v
    out["net"] = _listen_counters()
    return out


def _sched(pid: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run, wait, slices = (int(x) for x in f.read().split()[:3])
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = "loop" if int(tid) == pid else f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue
        # stat's minflt, utime and stime (fields 10, 14, 15; clock ticks): the kernel's share of
        # the run time, and the page faults taken (sampled at ticks, so only roughly split).
        v = [run, wait, slices, int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]),
             int(stat[7]), int(stat[11]), int(stat[12])]
        out[name] = [a + b for a, b in zip(out.get(name, [0] * len(v)), v)]
    return out


def _listen_counters() -> list[int]:
    try:
        with open("/proc/net/netstat") as f:
            lines = [line.split() for line in f if line.startswith("TcpExt:")]
        fields = dict(zip(lines[0][1:], (int(x) for x in lines[1][1:])))
        return [fields.get("ListenOverflows", 0), fields.get("ListenDrops", 0)]
    except (OSError, IndexError, ValueError):
        return [0, 0]


def _sched_delta(before: dict, after: dict) -> dict:
    """Over the storm: run and wait in seconds, the rest as counts."""
    out = {}
    for key, v in after.items():
        b = before.get(key, [0] * len(v))
        d = [x - y for x, y in zip(v, b)]
        if key == "net":
            out[key] = {"listen_overflows": d[0], "listen_drops": d[1]}
        else:
            out[key] = {"run_s": round(d[0] / 1e9, 3), "runqueue_wait_s": round(d[1] / 1e9, 3), "timeslices": d[2],
                        "voluntary_switches": d[3], "involuntary_switches": d[4], "minor_faults": d[5],
                        "user_s": round(d[6] / TICKS, 2), "system_s": round(d[7] / TICKS, 2)}
    return out


def _fail_over(ctx, system, n, workdir, sessions, facts):
    """A two-node cluster; the N windows connect to node 1, which is then killed. Returns the
    cluster, node 2's port and node 2's process: the storm goes there."""
    running = system.start(ctx, workdir)
    try:
        ports = running.generator_args[running.generator_args.index("--ports") + 1].split(",")
        gens, readies = _connect_windows(ctx, system, running.port, n, workdir, sessions)
        os.killpg(running.pid, signal.SIGKILL)
        running.proc.wait(timeout=30)
        release(gens, readies)
    except Exception:
        running.stop()
        raise
    _join_sessions(sessions, n)
    facts["start_seconds"] = 0.0  # node 2 was up all along
    return running, int(ports[1]), running.others[0]


def _storm_generators(ctx, system, port, n, workdir, sessions) -> list[Generator]:
    parts = split(n)
    gens, offset = [], 0
    for k, part in enumerate(parts):
        resume = ["--sessions", sessions] if sessions else []
        args = ["storm", "--protocol", system.protocol, "--port", str(port), "--n", str(part),
                "--first-index", str(offset), "--interval", str(NORMAL_INTERVAL_MS if k == 0 else 0),
                "--concurrency", str(max(32, 256 // len(parts))), "--wait-go", "--hold", "-1", "--quiet",
                "--timeout", str(ctx.timeout), *source_address(k, len(parts)), *resume,
                *system.generator_args(ctx, "connect", n), "--user", "storm-normal", "--users", "1"]
        gens.append(Generator(args, os.path.join(workdir, f"storm-{k}.log")))
        offset += part
    return gens
