#!/usr/bin/env python3
"""Event loops side by side (issue 14): Panes on lws's poll loop and on libev, same build.

For each loop: start `panes serve --store memory --event-loop LOOP`, connect N idle scenes with
panes-load (100 per user), then measure the server's CPU (utime + stime from /proc):
  idle     over --idle-seconds with the N held and nothing happening
  connect  per extra connect (TCP + WebSocket handshake + Panes `connect`) while the N are held,
           K of them one after another (each a new user), minus the idle rate over the same time
Both for the whole process and for the service thread alone (the loop, the hub; not the store
thread, whose memory store copies its whole state per commit and would hide the loop's cost).
Usage: bench/event-loops.py [--n 10000] [--connects 200] [--idle-seconds 10] [--loops poll,libev]
       (release binaries: swift build -c release --product panes; --product panes-load)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")
SETTINGS = {"maxSessionsPerUser": 100000, "rateLimitPerSecond": 100000, "rateLimitBurst": 100000,
            "maxOutboundQueue": 100000}


def cpu_seconds(pid, thread=None):
    """The process's CPU, or one thread's (the service thread is the main thread: its id is the pid)."""
    path = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def cpu(pid):
    return cpu_seconds(pid), cpu_seconds(pid, pid)


def start_server(binary, loop, workdir):
    config = os.path.join(workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"settings": SETTINGS}, f)
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--data", os.path.join(workdir, "data"),
                             "--store", "memory", "--config", config, "--log-level", "warning",
                             "--event-loop", loop],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r"listening on http://[0-9.]+:(\d+)", proc.stdout.readline()).group(1))
    return proc, port


def generator(load, port, n, user, users, first_index, concurrency, hold):
    return subprocess.Popen([load, "connect", "--protocol", "panes", "--port", str(port), "--n", str(n),
                             "--users", str(users), "--user", user, "--first-index", str(first_index),
                             "--concurrency", str(concurrency), "--hold", str(hold), "--quiet", "--timeout", "600"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def wait_for(proc, word):
    for line in proc.stdout:
        if word in line:
            return json.loads(line)
    raise RuntimeError(f"panes-load ended before {word}")


def measure(args, loop):
    with tempfile.TemporaryDirectory() as workdir:
        server, port = start_server(args.panes, loop, workdir)
        try:
            time.sleep(1)
            cpu0 = cpu(server.pid)
            held = generator(args.load, port, args.n, "idle", max(1, args.n // 100), 0, 256, -1)
            ready = wait_for(held, "ready")
            connect_all = cpu(server.pid)[0] - cpu0[0]
            time.sleep(2)
            t0, c0 = time.monotonic(), cpu(server.pid)
            time.sleep(args.idle_seconds)
            c1 = cpu(server.pid)
            idle = [(b - a) / (time.monotonic() - t0) for a, b in zip(c0, c1)]
            t1, c1 = time.monotonic(), cpu(server.pid)
            # Each extra connect is a new user, so no other scene of its user hears of it.
            extra = generator(args.load, port, args.connects, "extra", args.connects, args.n, 1, 0)
            extra_result = wait_for(extra, "result")
            elapsed, c2 = time.monotonic() - t1, cpu(server.pid)
            extra.wait()
            per_connect = [(b - a - rate * elapsed) / max(1, extra_result["ready"]) for a, b, rate in zip(c1, c2, idle)]
            held.stdin.close()
            held.wait(60)
            return {"loop": loop, "held": ready["ready"], "connect_all_cpu_s": round(connect_all, 3),
                    "idle_cores": round(idle[0], 4), "idle_cores_service_thread": round(idle[1], 4),
                    "extra_connects": extra_result["ready"],
                    "ms_per_extra_connect": round(per_connect[0] * 1000, 3),
                    "ms_per_extra_connect_service_thread": round(per_connect[1] * 1000, 3)}
        finally:
            server.terminate()
            server.wait(30)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--connects", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=10)
    parser.add_argument("--loops", default="poll,libev")
    parser.add_argument("--panes", default=os.path.join(ROOT, ".build", "release", "panes"))
    parser.add_argument("--load", default=os.path.join(ROOT, ".build", "release", "panes-load"))
    args = parser.parse_args()
    for loop in args.loops.split(","):
        print(json.dumps(measure(args, loop)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
