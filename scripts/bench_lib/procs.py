"""Child processes and what /proc says about them.

Every process the benchmark starts goes through `start()`, which puts it in a
session of its own and remembers it; `stop_all()` (run at exit, on Ctrl-C and
on SIGTERM) ends each of them by its own process group id, so nothing is left
behind, and nothing the benchmark did not start is touched.
"""
from __future__ import annotations

import atexit
import os
import re
import signal
import socket
import subprocess
import sys
import time
from typing import IO, Optional

_children: list[subprocess.Popen] = []
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def start(argv: list[str], *, log: Optional[str] = None, env: Optional[dict] = None,
          stdin: bool = False, cwd: Optional[str] = None) -> subprocess.Popen:
    """Starts `argv` in its own session; stdout is a pipe, stderr goes to `log`."""
    err: IO | int = open(log, "ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=err,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        env=env, cwd=cwd, start_new_session=True, text=True, bufsize=1)
    _children.append(proc)
    return proc


def stop(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGTERM to the child's process group, then SIGKILL after `grace` seconds."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream:
                stream.close()
        except OSError:
            pass
    if proc in _children:
        _children.remove(proc)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the group we created for it: its pid
    except (ProcessLookupError, PermissionError):
        pass


def stop_all() -> None:
    for proc in list(_children):
        try:
            stop(proc, grace=2.0)
        except Exception:  # noqa: BLE001 - cleanup must go on
            pass


def _on_signal(signum, _frame):
    stop_all()
    sys.stderr.write(f"\nbench: stopped by signal {signum}; every process it started is ended\n")
    sys.exit(128 + signum)


def install_cleanup() -> None:
    atexit.register(stop_all)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def wait_for_line(proc: subprocess.Popen, pattern: str, timeout: float) -> Optional[re.Match]:
    """Reads proc's stdout until a line matches `pattern`, the process exits or time runs out."""
    import selectors
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, min(0.5, deadline - time.monotonic()))):
                if proc.poll() is not None:
                    return None
                continue
            line = proc.stdout.readline()
            if not line:
                return None
            m = regex.search(line)
            if m:
                return m
        return None
    finally:
        sel.close()


def drain(proc: subprocess.Popen) -> None:
    """Reads and drops the rest of proc's stdout, so a chatty server never blocks on a full pipe."""
    import threading

    def run():
        try:
            for _ in proc.stdout:
                pass
        except (OSError, ValueError):
            pass
    threading.Thread(target=run, daemon=True).start()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float, proc: Optional[subprocess.Popen] = None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def memory_kb(pid: int) -> dict:
    """VmRSS and VmHWM of `pid`, in KiB (0 if it is gone)."""
    out = {"rss_kb": 0, "hwm_kb": 0}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    out["rss_kb"] = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    out["hwm_kb"] = int(line.split()[1])
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (its own threads, not its children), in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def _per_thread(pid: int, name: str, read) -> int:
    """Sums `read(file)` over /proc/<pid>/task/*/<name>; threads gone meanwhile count 0."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    total = 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                total += read(f)
        except (OSError, IndexError, ValueError):
            pass
    return total


def cpu_ns(pid: int) -> int:
    """CPU time of every live thread of `pid` in nanoseconds (schedstat: exact, unlike /proc ticks).

    Threads that have exited are not counted, so this is for short windows of a server whose
    threads live as long as it does (the loop, the store thread), where 10 ms ticks are too coarse.
    """
    return _per_thread(pid, "schedstat", lambda f: int(f.read().split()[0]))


def wakeups(pid: int) -> int:
    """Context switches of every live thread of `pid` (voluntary + involuntary): how often it woke."""
    switches = ("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")
    return _per_thread(pid, "status", lambda f: sum(int(line.split()[1]) for line in f if line.startswith(switches)))


def busy_cpu_seconds() -> float:
    """CPU time all processes on this machine have used (user+nice+system+irq+softirq), seconds."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / CLOCK_TICKS


class Phase:
    """Wall time and machine-wide busy CPU over one phase, to tell how much others took."""

    def __init__(self):
        self.t0, self.busy0 = time.monotonic(), busy_cpu_seconds()
        self.wall = self.busy = None

    def end(self) -> "Phase":
        self.wall = time.monotonic() - self.t0
        self.busy = busy_cpu_seconds() - self.busy0
        return self

    def background(self, *ours: float) -> dict:
        """CPU seconds used by processes other than `ours` (server, generator) over the phase."""
        other = max(0.0, self.busy - sum(x or 0 for x in ours))
        return {"wall_s": round(self.wall, 3), "other_cpu_s": round(other, 3),
                "other_cores": round(other / self.wall, 2) if self.wall else None}
