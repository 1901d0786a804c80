#!/usr/bin/env python3
"""Slow senders against a fresh `panes serve` (wp/headercap): N connections from one loopback
address (127.0.0.3), each sending part of a WebSocket upgrade request and then nothing; after two
seconds, how many the server still holds open, its open descriptors before and after, whether a
request from another address (127.0.0.1) is answered, and the server's header metrics.

Usage: bench/slow_headers.py PANES_BINARY N   (N connections; the process needs N descriptors)"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

binary, n = sys.argv[1], int(sys.argv[2])
data = tempfile.mkdtemp(prefix="panes-slow-headers-")
proc = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--store", "memory",
                         "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    port = None
    for line in proc.stdout:  # the banner names the port
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        if match:
            port = int(match.group(1)); break
    assert port, "the server printed no port"
    fds_before = len(os.listdir(f"/proc/{proc.pid}/fd"))
    socks = []
    for _ in range(n):
        s = socket.socket(); s.bind(("127.0.0.3", 0)); s.connect(("127.0.0.1", port))
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUp")
        socks.append(s)
    time.sleep(2)
    kept = 0
    for s in socks:
        s.setblocking(False)
        try:
            kept += 0 if s.recv(1) == b"" else 1
        except BlockingIOError:
            kept += 1
        except OSError:
            pass
    fds_after = len(os.listdir(f"/proc/{proc.pid}/fd"))
    started = time.time()
    health = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).read()
    took = time.time() - started
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    lines = [m for m in metrics.splitlines() if "in_headers" in m and not m.startswith("#")]
    print(f"{binary}: {n} slow connections from 127.0.0.3: {kept} kept open by the server, "
          f"its descriptors {fds_before} -> {fds_after}; /healthz from 127.0.0.1: {health!r} in {took * 1000:.1f} ms; "
          f"{lines}")
finally:
    proc.terminate(); proc.wait()
