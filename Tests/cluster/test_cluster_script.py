"""`scripts/cluster`, as the README and docs/operating.md tell a person to run it: it starts a
private PostgreSQL, the nodes and haproxy, prints the URL, serves through it, and Ctrl-C stops everything and
removes its folder (so does SIGTERM, which the test sends)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from panes_cluster import BINARY, ROOT, Client, free_port


def test_scripts_cluster_serves_through_haproxy_and_stops_cleanly():
    port = free_port()
    ready = Path(tempfile.mkdtemp()) / "ready"
    environment = dict(os.environ, PANES_BINARY=str(BINARY), PANES_CLUSTER_READY=str(ready))
    script = subprocess.Popen([str(ROOT / "scripts" / "cluster"), "--nodes", "2", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert script.poll() is None, f"scripts/cluster exited: {script.stdout.read()}"
            assert time.monotonic() < deadline, "scripts/cluster did not come up"
            time.sleep(0.1)
        url, *node_ports = ready.read_text().split()
        assert url == f"http://127.0.0.1:{port}" and len(node_ports) == 2
        work = next(line for line in iter(script.stdout.readline, "") if "logs in" in line)
        folder = re.search(r"logs in (\S+)\)", work).group(1)
        # Two connections through haproxy: round robin puts them on both nodes, which share state.
        first = Client(f"ws://127.0.0.1:{port}/ws", "ada", "w")
        second = Client(f"ws://127.0.0.1:{port}/ws", "ada", "w")
        first.request("observe", domain="user", keyPath="theme", options=["new"])
        second.request("setPreference", domain="user", keyPath="theme", value="dark")
        assert first.event("preferenceChanged")["new"] == "dark"
        first.close()
        second.close()
    finally:
        # Ctrl-C at a terminal; SIGTERM here, because a test run started in the background
        # (`cmd &` in a script) has SIGINT ignored, and an ignored signal cannot be trapped.
        os.killpg(script.pid, signal.SIGTERM)
        script.wait(timeout=60)
    assert not Path(folder).exists(), "stopping removes the cluster's folder"
    for node_port in node_ports:
        assert subprocess.run(["curl", "-s", f"http://127.0.0.1:{node_port}/healthz"],
                              capture_output=True).returncode != 0, "every node stopped"
