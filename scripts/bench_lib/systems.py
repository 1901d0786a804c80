"""The systems measured side by side, each started fresh on loopback for every run.

A system knows how to get itself ready (packages, binaries), how to start on a
free port, which process to watch for memory and CPU, and what panes-load
needs to speak to it.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Optional

from . import ROOT, procs, setup

READY_LINE = r"listening on http://[0-9.]+:(\d+)"

# Limits a real server keeps and a benchmark must lift (see PROTOCOL.md, Settings.swift).
# Written into the run's configuration file only if this server knows them (`panes settings`):
# a server refuses unknown settings, and newer ones add limits (maxPreferenceKeys …).
PANES_SETTINGS = {
    "maxSessionsPerUser": 100000,
    "rateLimitPerSecond": 100000,
    "rateLimitBurst": 100000,
    "maxOutboundQueue": 100000,
    # docsize: a 1 MB document, created in one message, growing while 50 editors type
    "maxMessageBytes": 8 << 20,
    "maxDocumentScalars": 8 << 20,
    # prefwrite: 10,000 keys in one user's domain (issue 13 item 9 adds these limits)
    "maxPreferenceKeys": 100000,
    "maxPreferenceBytes": 64 << 20,
}


@dataclass
class Running:
    proc: subprocess.Popen
    port: int
    workdir: str
    # A cluster (cluster.py): the other nodes, and what panes-load needs to spread over them.
    others: list = field(default_factory=list)
    generator_args: list = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return all(p.poll() is None for p in (self.proc, *self.others))

    def stop(self) -> None:
        for p in (self.proc, *self.others):
            procs.stop(p)

    def snapshot(self) -> dict:
        """What a cluster reads before and after a measured phase (per-node CPU); nothing here."""
        return {}

    def describe(self, before: dict, after: dict, ops: int, seconds: float) -> Optional[dict]:
        """The cluster's per-node figures over that phase; a single server has none."""
        return None


@dataclass
class System:
    name: str
    label: str
    protocol: str
    note: str
    packages: list[str] = field(default_factory=list)
    unavailable: Optional[str] = None
    # Workloads this system can run; `docs` needs a document model (Panes, y-websocket).
    workloads: tuple[str, ...] = ("connect", "fanout", "throughput")
    # docs: opening a document is a request of its own (Panes), not implied by connecting.
    separate_open: bool = False

    def supports(self, workload: str) -> bool:
        return workload in self.workloads

    def prepare(self, ctx) -> None:
        if self.packages:
            self.unavailable = setup.ensure_packages(self.packages, ctx.allow_install)

    def argv(self, ctx, workdir: str, port: int) -> list[str]:
        raise NotImplementedError

    def env(self) -> Optional[dict]:
        return None

    def fixed_port(self) -> bool:
        """True if the script must pick the port (the server cannot report one)."""
        return False

    def start(self, ctx, workdir: str, extra: tuple[str, ...] | list[str] = ()) -> Running:
        """`extra`: more options for the server (authflood: `--auth jwt` and its key file)."""
        os.makedirs(workdir, exist_ok=True)
        port = procs.free_port() if self.fixed_port() else 0
        proc = procs.start(self.argv(ctx, workdir, port) + list(extra), log=os.path.join(workdir, "server.log"),
                           env=self.env(), cwd=workdir)
        if self.fixed_port():
            if not procs.wait_for_port(port, 30, proc):
                procs.stop(proc)
                raise RuntimeError(f"{self.label} did not start (see {workdir}/server.log)")
        else:
            m = procs.wait_for_line(proc, READY_LINE, 60)
            if not m:
                procs.stop(proc)
                raise RuntimeError(f"{self.label} did not print its port (see {workdir}/server.log)")
            port = int(m.group(1))
        procs.drain(proc)
        return Running(proc, port, workdir)

    def generator_args(self, ctx, workload: str, n: int) -> list[str]:
        return []

    def event_loop(self, ctx) -> Optional[str]:
        """The event loop this system runs on, for comparing like with like (None: not lws)."""
        return None


PANES_WORKLOADS = ("connect", "fanout", "throughput", "docs", "docsize", "idle", "connect-under-load",
                   "acklat", "prefwrite", "soak", "cluster-docs", "storm",
                   "authflood")


class Panes(System):
    """`panes serve`; `loop` adds `--event-loop LOOP` (None: the server's default loop). `restart`
    is how the storm row restarts it before its windows come back: "drain" (SIGTERM) or "kill"
    (kill -9; such a system runs only that row)."""

    def __init__(self, store: str = "sqlite", loop: Optional[str] = None, restart: str = "drain"):
        memory = store == "memory"
        name = "panes-mem" if memory else "panes"
        label = "Panes (memory store)" if memory else "Panes"
        if store == "postgres":
            name, label = "panes-pg", "Panes (PostgreSQL store)"
        if loop:
            name, label = f"{name}-{loop}", f"{label[:-1]}, {loop} loop)" if memory else f"Panes ({loop} loop)"
        if restart == "kill":
            name, label = f"{name}-kill9", "Panes (after kill -9)"
        super().__init__(
            name=name, label=label, protocol="panes",
            note=("Panes with --store memory: same protocol, JSON and state, nothing written to disk."
                  if memory else
                  "Panes with --store postgres://…: a private PostgreSQL 15 on this machine (fsync and "
                  "synchronous_commit on, over TCP on 127.0.0.1), a fresh database per run; acknowledged "
                  "means committed in PostgreSQL."
                  if store == "postgres" else
                  "Panes as shipped: SQLite store, synchronous=full; every preference write and document "
                  "edit is durable (committed with fsync) before its reply and before others hear of it.")
                 + (f" `panes serve --event-loop {loop}`." if loop else "")
                 + (" Restarted with kill -9 (no drain) before its windows come back." if restart == "kill" else ""),
            workloads=PANES_WORKLOADS if restart == "drain" else ("storm",), separate_open=True)
        self.store = store
        self.loop = loop
        self.restart = restart

    def prepare(self, ctx) -> None:
        self.unavailable = ctx.panes_unavailable
        if not self.unavailable and self.store == "postgres":
            self.unavailable = _postgres.start(ctx.allow_install)
        if not self.unavailable and self.loop and "--event-loop" not in ctx.panes_serve_help():
            self.unavailable = "this panes has no `serve --event-loop` option"

    def event_loop(self, ctx) -> Optional[str]:
        if self.loop:
            return self.loop
        m = re.search(r"--event-loop[\s\S]*?default: (\w+)", ctx.panes_serve_help())
        return m.group(1) if m else "poll"  # a server without the option has only lws's poll loop

    def argv(self, ctx, workdir, port):
        config = os.path.join(workdir, "panes-config.json")
        known = ctx.panes_settings()
        with open(config, "w") as f:
            json.dump({"settings": {k: v for k, v in PANES_SETTINGS.items() if k in known}}, f)
        loop = ["--event-loop", self.loop] if self.loop else []
        store = _postgres.fresh_database() if self.store == "postgres" else self.store
        return [ctx.panes_bin, "serve", "--host", "127.0.0.1", "--port", "0",
                "--data", os.path.join(workdir, "data"), "--store", store,
                "--config", config, "--log-level", "warning", *loop, *ctx.server_args]

    def generator_args(self, ctx, workload, n):
        if workload == "connect":
            # 100 scenes per user, as many windows of many people, not one person's 50k.
            return ["--users", str(max(1, n // 100))]
        if workload == "docs":
            # E people (editor-0 …) in one workspace, one scene each.
            return ["--user", "editor", "--users", str(n), "--workspace", "bench-docs"]
        if workload == "probe":
            return ["--user", "probe"]  # a person of their own, beside the idle ones
        return []


# Panes' lws receive buffer per connection (`WebSocketServer.receiveBufferBytes`); the raw lws
# comparator runs with lws's default (4096) and, for the memory rows, with this one too.
PANES_RX_BUFFER = 2048


class Raw(System):
    """panes-raw-broadcast on lws's poll loop, or on its libev plugin (`loop="libev"`); `rx_buffer`:
    lws's receive buffer per connection (None: lws's default, 4096), e.g. Panes' own."""

    def __init__(self, loop: str = "poll", rx_buffer: Optional[int] = None):
        libev = loop == "libev"
        name = "raw-libev" if libev else "raw"
        label = "raw lws broadcast (libev loop)" if libev else "raw lws broadcast"
        if rx_buffer:
            name = f"{name}-rx{rx_buffer // 1024}k" if rx_buffer % 1024 == 0 else f"{name}-rx{rx_buffer}"
            label = f"{label[:-1] if libev else label + ' ('}{', ' if libev else ''}{_bytes(rx_buffer)} receive buffer)"
        super().__init__(
            name=name, label=label,
            protocol="raw",
            packages=["libwebsockets-evlib-ev"] if libev else [],
            # With Panes' buffer it is a comparator for what a connection holds, not a new ceiling.
            workloads=("connect", "idle", "connect-under-load") if rx_buffer else
            ("connect", "fanout", "throughput", "idle", "connect-under-load", "storm"),
            note=(f"panes-raw-broadcast: the same libwebsockets (4.1, {'libev loop: Debian’s evlib plugin, epoll underneath' if libev else 'poll loop'}) "
                  "relaying each frame to every other client; no protocol, JSON, state or storage. "
                  "The ceiling for an lws server."
                  + (f" `--rx-buffer {rx_buffer}`: lws's receive buffer per connection the size Panes uses "
                     "(lws's default is 4096), so memory per connection is compared like with like."
                     if rx_buffer else " lws's default receive buffer (4096 bytes per connection).")))
        self.loop = loop
        self.rx_buffer = rx_buffer

    def prepare(self, ctx):
        super().prepare(ctx)
        self.unavailable = self.unavailable or ctx.tool_unavailable

    def event_loop(self, ctx) -> Optional[str]:
        return self.loop

    def argv(self, ctx, workdir, port):
        rx = ["--rx-buffer", str(self.rx_buffer)] if self.rx_buffer else []
        return [setup.binary("panes-raw-broadcast"), "--host", "127.0.0.1", "--port", "0",
                "--event-loop", self.loop, *rx]


def _bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


class Nchan(System):
    MODULE = "/usr/lib/nginx/modules/ngx_nchan_module.so"

    def __init__(self):
        super().__init__(
            name="nchan", label="nchan (nginx)", protocol="nchan",
            packages=["nginx-light", "libnginx-mod-nchan"],
            workloads=("connect", "fanout", "throughput", "storm"),
            note="nginx-light + libnginx-mod-nchan, one process (master_process off), memory storage: "
                 "a publish is not made durable. Writer publishes by HTTP POST on a keep-alive "
                 "connection; observers are WebSocket subscribers.")

    def fixed_port(self):
        return True

    def argv(self, ctx, workdir, port):
        with open(os.path.join(ROOT, "bench", "nchan", "nginx.conf.in")) as f:
            conf = f.read()
        conf = conf.replace("@DIR@", workdir).replace("@PORT@", str(port)).replace("@MODULE@", self.MODULE)
        path = os.path.join(workdir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["nginx", "-p", workdir, "-e", os.path.join(workdir, "error.log"), "-c", path]


class YWebsocket(System):
    def __init__(self):
        super().__init__(
            name="yjs", label="y-websocket", protocol="yjs",
            packages=["nodejs", "node-y-websocket", "node-ws", "node-yjs"],
            note="Debian's node-y-websocket server code (setupWSConnection) on Node, documents in memory "
                 "(no persistence). Each change is a real Yjs update (an insert of `payload` characters), "
                 "sent as a binary sync frame; the server applies it and broadcasts it to every client "
                 "of the document, the writer included. docs: editor i's Y.Doc (client id i+1) types one "
                 "character after its own previous one in the shared Y.Text, updates prepared by "
                 "scripts/bench_lib/yjs_editors.js; its own echo is its acknowledgement (nothing is "
                 "durable), and a client is in the document from the moment it connects.",
            workloads=("connect", "fanout", "throughput", "docs"))

    def env(self):
        return dict(os.environ, NODE_PATH=setup.NODE_PATH)

    def argv(self, ctx, workdir, port):
        return ["node", os.path.join(ROOT, "bench", "y-websocket-server.js"), "0"]

    def generator_args(self, ctx, workload, n):
        args = ["--channel", f"doc-{workload}-{n}"]
        if workload == "docs":
            path = ctx.yjs_editor_updates.get(n)
            return args + (["--updates", path] if path else [])
        if workload != "connect" and ctx.yjs_updates:
            args += ["--updates", ctx.yjs_updates]
        return args


class _PrivatePostgres:
    """One private PostgreSQL cluster for the whole bench run (scripts/lib/postgres.sh), stopped
    at exit; every `panes-pg` run gets a database of its own on it."""

    def __init__(self):
        self.dir: Optional[str] = None
        self.url: Optional[str] = None
        self.count = 0

    def _shell(self, command: str) -> subprocess.CompletedProcess:
        lib = os.path.join(ROOT, "scripts", "lib")
        return subprocess.run(["bash", "-c", f'source "{lib}/deps.sh"; source "{lib}/postgres.sh"; {command}'],
                              capture_output=True, text=True)

    def start(self, allow_install: bool) -> Optional[str]:
        """Starts the cluster once; returns why it is unavailable, or None."""
        if self.url:
            return None
        if allow_install:
            self._shell("postgres_dependencies")
        import atexit
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="panes-bench-pg.")
        r = self._shell(f'postgres_start "{self.dir}"')
        if r.returncode != 0 or not r.stdout.strip().startswith("postgres://"):
            return f"could not start a private PostgreSQL: {r.stderr.strip()[-300:]}"
        self.url = r.stdout.strip().splitlines()[-1]
        atexit.register(lambda: self._shell(f'postgres_stop "{self.dir}"'))
        return None

    def fresh_database(self) -> str:
        self.count += 1
        name = f"bench_{os.getpid()}_{self.count}"
        subprocess.run(["psql", self.url, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        return self.url.rsplit("/", 1)[0] + "/" + name


_postgres = _PrivatePostgres()
