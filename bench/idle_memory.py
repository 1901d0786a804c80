#!/usr/bin/env python3
"""Where an idle scene's memory goes, beside the idle row (issue 27).

The idle row (`scripts/bench idle`) divides the server's RSS growth from one connection made and
closed to N held by N. That quotient also carries what does not grow with N once it is full, such
as SQLite's page cache (`sqliteCacheKiB`), which fills while the N sessions are written. This
holds the same N idle scenes in two halves on one server and reports both the row's figure and
the slope (RSS at N less RSS at N/2, over N/2): what one more scene costs.

With --malloc it also asks glibc, through gdb, what every arena took from the system and holds
free at N (`malloc_info`), walks the main arena's chunks (`/proc/PID/mem`) for the free ones by
size and what lies on either side of them, and measures how much RSS `malloc_trim(0)` gives back:
heap freed after the connect burst but kept. `--system raw` holds N plain WebSockets on the raw
lws server with Panes' 2 KiB receive buffer (the idle row's `raw-libev-rx2k`), so the same figures
can be set side by side; `--env GLIBC_TUNABLES=glibc.malloc.arena_max=1` runs the server with a
malloc tunable.

    bench/idle_memory.py --bin /work/bin/main-s8 --n 10000 [--setting sqliteCacheKiB=2000] [--malloc]
    bench/idle_memory.py --bin /work/bin/main-s10b --n 10000 --system raw --malloc
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

SETTINGS = {"maxSessionsPerUser": 100000, "rateLimitPerSecond": 100000, "rateLimitBurst": 100000,
            "maxOutboundQueue": 100000}
READY = re.compile(r"listening on http://[0-9.]+:(\d+)")


def _setting(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, int(value)


def _variable(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def hold(args, port: int, n: int, first: int) -> subprocess.Popen:
    """`panes-load connect` holding n scenes (100 a user, as the idle row), or n plain WebSockets
    on the raw server, once all are ready."""
    users = ["--users", str(max(1, n // 100))] if args.system == "panes" else []
    proc = subprocess.Popen([os.path.join(args.bin, "panes-load"), "connect", "--protocol", args.system, "--port", str(port),
                             "--n", str(n), "--hold", "-1", "--first-index", str(first), "--concurrency", "256",
                             "--quiet", "--timeout", "300", *users],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if '"event":"ready"' in line:
            return proc
    raise RuntimeError("panes-load ended before it was ready")


def gdb_call(pid: int, expression: str) -> str:
    return subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", f"call {expression}"],
                          capture_output=True, text=True, timeout=120).stdout


def _size_class(size: int) -> str:
    for bound in (128, 512, 1024, 2048, 4096):
        if size < bound:
            return f"<{bound}"
    return ">=4096"


def heap_holes(pid: int) -> dict:
    """The main arena's chunks, walked from the start of `[heap]` to its top chunk: the free ones
    (the next chunk's PREV_INUSE bit clear; tcache and fastbin chunks count as in use) by size
    class, the commonest exact sizes, and the sizes of the chunks on either side of them."""
    with open(f"/proc/{pid}/maps") as f:
        heap = next((line for line in f if line.rstrip().endswith("[heap]")), None)
    if heap is None:
        return {}
    low, high = (int(x, 16) for x in heap.split()[0].split("-"))
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(low)
        memory = f.read(high - low)
    chunks, offset = [], 0
    while offset + 16 <= len(memory):
        size = struct.unpack_from("<Q", memory, offset + 8)[0] & ~7
        if not size:
            break
        chunks.append(size)
        offset += size
    free, classes, exact, sides = 0, collections.Counter(), collections.Counter(), collections.Counter()
    at = 0
    for i, size in enumerate(chunks[:-1]):
        following = at + size
        if not struct.unpack_from("<Q", memory, following + 8)[0] & 1:
            free += size
            classes[_size_class(size)] += size
            exact[size] += 1
            sides[(chunks[i - 1] if i else 0, chunks[i + 1])] += 1
        at = following
    return {"chunks": len(chunks), "free_bytes": free, "top_chunk": chunks[-1] if chunks else 0,
            "free_bytes_by_size": dict(classes), "free_sizes": exact.most_common(6),
            "free_between": [[before, after, count] for (before, after), count in sides.most_common(4)]}


def malloc_report(pid: int, workdir: str) -> dict:
    """glibc's arenas at this moment: each one's bytes from the system and free bytes and chunks,
    the main arena's holes, and what `malloc_trim(0)` gives back."""
    path = os.path.join(workdir, "malloc_info.xml")
    gdb_call(pid, f'(int)malloc_info(0, (void*)fopen("{path}", "w"))')
    gdb_call(pid, "(int)fflush(0)")
    arenas = []
    with open(path) as f:
        xml = f.read()
    for heap in re.finditer(r'<heap nr="(\d+)">(.*?)</heap>', xml, re.S):
        body = heap.group(2)
        rest = re.search(r'<total type="rest" count="(\d+)" size="(\d+)"/>', body)
        fast = re.search(r'<total type="fast" count="(\d+)" size="(\d+)"/>', body)
        system = re.search(r'<system type="current" size="(\d+)"/>', body)
        arenas.append({"arena": int(heap.group(1)), "free_chunks": int(rest.group(1)) if rest else None,
                       "free_bytes": int(rest.group(2)) if rest else None,
                       "fast_bytes": int(fast.group(2)) if fast else None,
                       "system_bytes": int(system.group(1)) if system else None})
    holes = heap_holes(pid)
    before = rss_kb(pid)
    gdb_call(pid, "(int)malloc_trim(0)")
    return {"arenas": arenas, "threads": len(os.listdir(f"/proc/{pid}/task")), "main_arena_holes": holes,
            "rss_before_trim_kb": before, "rss_after_trim_kb": rss_kb(pid)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", required=True, help="folder with release `panes` and `panes-load`")
    p.add_argument("--n", type=int, default=10000, help="idle scenes held in all (in two halves)")
    p.add_argument("--loop", default="libev", help="the server's --event-loop (the idle row's Panes: libev)")
    p.add_argument("--setting", action="append", default=[], type=_setting, metavar="NAME=VALUE",
                   help="a server setting for the run (e.g. sqliteCacheKiB=2000); repeatable")
    p.add_argument("--malloc", action="store_true",
                   help="glibc's arenas and the main arena's holes at N, and RSS after malloc_trim (gdb)")
    p.add_argument("--system", choices=["panes", "raw"], default="panes",
                   help="raw: BIN's panes-raw-broadcast with a 2 KiB receive buffer (the idle row's raw-libev-rx2k)")
    p.add_argument("--env", action="append", default=[], type=_variable, metavar="NAME=VALUE",
                   help="an environment variable for the server (e.g. GLIBC_TUNABLES=glibc.malloc.arena_max=1)")
    args = p.parse_args()
    workdir = tempfile.mkdtemp(prefix="idle-memory-")
    config = os.path.join(workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"settings": {**SETTINGS, **dict(args.setting)}}, f)
    if args.system == "panes":
        argv = [os.path.join(args.bin, "panes"), "serve", "--host", "127.0.0.1", "--port", "0",
                "--data", os.path.join(workdir, "data"), "--store", "sqlite", "--config", config,
                "--log-level", "warning", "--event-loop", args.loop]
    else:
        argv = [os.path.join(args.bin, "panes-raw-broadcast"), "--host", "127.0.0.1", "--port", "0",
                "--event-loop", args.loop, "--rx-buffer", "2048"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(os.path.join(workdir, "server.log"), "w"),
                              text=True, env={**os.environ, **dict(args.env)})
    holders = []
    try:
        port = next(int(m.group(1)) for m in map(READY.search, server.stdout) if m)
        first = hold(args, port, 1, 0)  # what the server sets up at its first connection
        first.stdin.close()
        first.wait()
        time.sleep(1)
        base = rss_kb(server.pid)
        half = args.n // 2
        holders.append(hold(args, port, half, 1))
        time.sleep(2)  # the idle row's wait: the server finishes what connecting started
        at_half = rss_kb(server.pid)
        holders.append(hold(args, port, args.n - half, 1 + half))
        time.sleep(2)
        at_n = rss_kb(server.pid)
        result = {"n": args.n, "system": args.system, "settings": dict(args.setting), "env": dict(args.env),
                  "base_rss_kb": base, "half_rss_kb": at_half,
                  "rss_kb": at_n, "per_scene_kb": round((at_n - base) / args.n, 3),
                  "slope_kb": round((at_n - at_half) / (args.n - half), 3)}
        if args.malloc:
            result["malloc"] = malloc_report(server.pid, workdir)
        print(json.dumps(result, indent=1))
    finally:
        for holder in holders:
            holder.stdin.close()
        for holder in holders:
            holder.wait(timeout=60)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
