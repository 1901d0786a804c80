"""A Panes cluster for tests: a private PostgreSQL 15, N `panes serve` nodes on it and
haproxy in front, all on loopback, plus a small synchronous protocol client.

The nodes run with short leases (`nodeLeaseMs` 1500, `nodeHeartbeatMs` 250) so the fault
tests finish quickly; everything else is the server's defaults.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("PANES_BINARY", ROOT / ".build" / "debug" / "panes"))
LEASE_MS = 1500
HEARTBEAT_MS = 250


class Evidence:
    """What a failing test's report shows (conftest.py): the log of every node started during
    the test and the database server's log from the test's start. `keep` is called as a log
    starts; `begin` empties the list before each test."""

    logs: list[tuple[str, object]] = []

    @classmethod
    def keep(cls, title: str, text) -> None:
        """`text` gives the log as it is when asked (a callable: it is read once the test failed)."""
        cls.logs.append((title, text))

    @classmethod
    def begin(cls, servers: list["Postgres"]) -> None:
        cls.logs = []
        for server in servers:
            offset = server.log_size()
            cls.keep(f"postgres {server.port}", lambda server=server, offset=offset: server.log_since(offset))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bash(script: str) -> str:
    """Runs shell code with the repository's script libraries loaded; returns its stdout."""
    full = f'source "{ROOT}/scripts/lib/deps.sh"; source "{ROOT}/scripts/lib/postgres.sh"; {script}'
    done = subprocess.run(["bash", "-c", full], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed ({done.returncode}): {done.stderr}{done.stdout}")
    return done.stdout.strip()


class Postgres:
    """A private PostgreSQL cluster in a folder of its own."""

    # The servers running now, whose logs a failing test's report shows (`Evidence`).
    running: list["Postgres"] = []

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="panes-pg-"))
        self.url = bash(f'postgres_start "{self.dir}"')
        self.port = int(re.search(r":(\d+)/", self.url).group(1))
        self.log_path = Path(bash(f'_postgres_home "{self.dir}"')) / "server.log"
        Postgres.running.append(self)
        # Made during a test (the first one's setup, or by the test itself): its whole log.
        Evidence.keep(f"postgres {self.port}", lambda: self.log_since(0))

    def log_size(self) -> int:
        """How long the server's log is now, to show only what a test added (`log_since`)."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, offset: int) -> str:
        """The server's log from `offset` on ("" when it cannot be read: it is the postgres
        user's, in a folder that user owns)."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                return log.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def psql(self, sql: str, database: str = "postgres") -> str:
        return subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database, "-Atqc", sql],
            check=True, capture_output=True, text=True).stdout.strip()

    def create_database(self) -> str:
        name = "panes_" + secrets.token_hex(6)
        self.psql(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name

    def stop_server(self, mode: str = "fast") -> float:
        """Stops the server: `fast` (clients disconnected, a clean shutdown) or `immediate`
        (every process ended at once, as a crash: recovery at the next start).

        A checkpoint is made first, while the server still serves: a fast shutdown ends with
        one, which writes and fsyncs every file written since the last (every database the
        session's earlier tests made: 7,800 files, 21 s on this machine's disk while others
        built), and the server is unreachable all that time, longer than a test's lease; a
        crash would leave as much to recover and write at the next start. The outage is then
        what the test says.
        - Returns: when the server began to stop (after the checkpoint), on `time.monotonic`."""
        self.psql("CHECKPOINT")
        stopping = time.monotonic()
        bash(f'home=$(_postgres_home "{self.dir}"); '
             f'_postgres_as_owner "$(postgres_bindir)/pg_ctl" -D "$home/data" -w -t 60 -m {mode} stop >/dev/null')
        return stopping

    def start_server(self) -> None:
        # As postgres_start started it: same port, same socket folder, fsync on.
        bash(f'home=$(_postgres_home "{self.dir}"); '
             f'_postgres_as_owner "$(postgres_bindir)/pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 60 '
             f'-o "-c listen_addresses=127.0.0.1 -p {self.port} -k $home/socket -c max_connections=300 -c fsync=on" '
             f'start >/dev/null')

    def close(self) -> None:
        if self in Postgres.running:
            Postgres.running.remove(self)
        bash(f'postgres_stop "{self.dir}"')


class Node:
    def __init__(self, store: str, public_url: str, config: Path, index: int, args: list[str] = ()) -> None:
        self.index = index
        self.store = store
        self.public_url = public_url
        self.config = config
        self.args = list(args)
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.log: list[str] = []
        # The same lines with when each arrived: the node stamps its lines to the second, a
        # failing test's evidence (`log_text`) to the millisecond, as the database's log is.
        self.stamped: list[tuple[float, str]] = []
        self.readers: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self) -> "Node":
        self.process = subprocess.Popen(
            [str(BINARY), "serve", "--store", self.store, "--host", "127.0.0.1", "--port", str(self.port),
             "--public-url", self.public_url, "--config", str(self.config), "--log-level", "info", *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        banner = self.process.stdout.readline()
        match = re.search(r"listening on http://[\d.]+:(\d+)", banner)
        if not match:
            self.process.kill()
            raise RuntimeError(f"node {self.index} did not start: {banner!r}\n{self.process.stderr.read()}")
        self.port = int(match.group(1))
        if not self.log:
            Evidence.keep(f"node {self.index} (port {self.port})", self.log_text)
        self.log.append(banner)
        self.stamped.append((time.time(), banner))
        self.readers = [threading.Thread(target=self.read, args=(stream,), daemon=True)
                        for stream in (self.process.stdout, self.process.stderr)]
        for reader in self.readers:
            reader.start()
        return self

    def read(self, stream) -> None:
        for line in stream:
            self.stamped.append((time.time(), line))
            self.log.append(line)

    def log_text(self) -> str:
        """Everything the node wrote (both streams, as they came), with how its process ended;
        for a failing test's report (conftest.py). Waits a moment for the last lines of a
        process that has ended."""
        if self.process and self.process.poll() is not None:
            for reader in self.readers:
                reader.join(timeout=2)
        code = self.process.poll() if self.process else None
        ended = "still running" if code is None else f"exited with {code}"
        lines = [time.strftime("%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d} {line}"
                 for at, line in list(self.stamped)]
        return "".join(lines) + f"[node {self.index} on port {self.port}: {ended}]\n"

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


class Cluster:
    """N nodes on one fresh database of `pg`, and haproxy in front of them.

    - Parameters:
      - settings: more configuration settings for every node (the same on each, as in a
        deployment), over the short leases.
      - node_args: more `panes serve` arguments for every node (say `--web DIR`).
      - configuration: more top-level configuration (say `webhooks`).
      - sockets_apart: WebSocket upgrades (`/ws`) get a round-robin backend of their own, so
        consecutive sockets alternate between nodes whatever page loads go between them.
    """

    def __init__(self, pg: Postgres, nodes: int = 2, haproxy: bool = True, lease_ms: int = LEASE_MS,
                 settings: dict | None = None, node_args: list[str] = (), sockets_apart: bool = False,
                 configuration: dict | None = None) -> None:
        self.pg = pg
        self.dir = Path(tempfile.mkdtemp(prefix="panes-cluster-"))
        self.store = pg.create_database()
        self.lb_port = free_port()
        self.public_url = f"http://127.0.0.1:{self.lb_port}"
        self.config = self.dir / "config.json"
        self.config.write_text(json.dumps(
            # `dropConfirmTimeoutMs` must be under the lease less a heartbeat (refused at load).
            {"settings": {"nodeLeaseMs": lease_ms, "nodeHeartbeatMs": HEARTBEAT_MS,
                          "dropConfirmTimeoutMs": min(2_000, lease_ms - HEARTBEAT_MS - 250), **(settings or {})},
             **(configuration or {})}))
        self.nodes = [Node(self.store, self.public_url, self.config, i, node_args).start() for i in range(nodes)]
        self.sockets_apart = sockets_apart
        self.haproxy: subprocess.Popen | None = None
        if haproxy:
            self.start_haproxy()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.lb_port}/ws"

    def start_haproxy(self) -> None:
        lines = [
            "defaults", "  mode http", "  timeout connect 2s", "  timeout client 60s", "  timeout server 60s",
            "  timeout tunnel 1h",
            "frontend panes", f"  bind 127.0.0.1:{self.lb_port}", "  default_backend nodes",
        ]
        if self.sockets_apart:
            lines += ["  acl socket path /ws", "  use_backend sockets if socket"]
        for backend in ("nodes", "sockets") if self.sockets_apart else ("nodes",):
            lines += [
                # A connection a dead node refuses is tried again on another node at once, not
                # on the same one after haproxy's 1 s turn-around (3 s over its 3 retries).
                f"backend {backend}", "  balance roundrobin", "  option redispatch 1", "  option httpchk",
                f"  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1:{self.lb_port}",
                "  http-check expect status 200",
            ]
            for node in self.nodes:
                lines.append(f"  server node{node.index} 127.0.0.1:{node.port} check inter 200ms fall 2 rise 1")
        (self.dir / "haproxy.cfg").write_text("\n".join(lines) + "\n")
        self.haproxy = subprocess.Popen(["haproxy", "-f", str(self.dir / "haproxy.cfg"), "-db"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.lb_port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("haproxy did not start")

    def close(self) -> None:
        if self.haproxy:
            self.haproxy.kill()
            self.haproxy.wait()
        for node in self.nodes:
            node.stop()


class FrameLog:
    """With $PANES_FRAME_LOG set, every text frame the test clients send and receive is kept
    as JSON lines there, for scripts/check_frames.py to check against PROTOCOL.schema.json."""

    lock = threading.Lock()
    file = None
    sockets = itertools.count(1)

    @classmethod
    def record(cls, connection: str, direction: str, text: str) -> None:
        folder = os.environ.get("PANES_FRAME_LOG")
        if not folder:
            return
        test = os.environ.get("PYTEST_CURRENT_TEST", "(no test)").removesuffix(" (call)").removesuffix(" (setup)")
        with cls.lock:
            if cls.file is None:
                Path(folder).mkdir(parents=True, exist_ok=True)
                cls.file = open(Path(folder) / f"cluster-{os.getpid()}.jsonl", "a", encoding="utf-8")
            cls.file.write(json.dumps({"connection": connection, "direction": direction, "test": test, "text": text}) + "\n")
            cls.file.flush()


class Closed(Exception):
    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed with {code}")
        self.code = code


class Client:
    """One WebSocket connection speaking the Panes protocol, synchronously. Events that
    arrive while waiting for a reply are kept in `events`."""

    ids = itertools.count(1)

    def __init__(self, url: str, name: str, workspace: str, session: dict | None = None,
                 ticket: str | None = None, timeout: float = 15, token: str | None = None,
                 connect: bool = True) -> None:
        self.url = url
        self.ws = ws_connect(url, max_size=None, open_timeout=10, subprotocols=["panes.v1"], compression=None)
        self.events: list[dict] = []
        self.closed_code: int | None = None
        self.name = f"cluster-{os.getpid()}-{next(FrameLog.sockets)}"
        fields: dict = {"protocol": 1, "auth": {"token": token} if token else {"name": name}, "workspace": workspace}
        if session:
            fields["session"] = session
        if ticket:
            fields["ticket"] = ticket
        # connect=False: a socket that has not sent `connect` yet (tests of what comes before it).
        self.connected = self.request("connect", timeout=timeout, **fields) if connect else {}

    @property
    def credentials(self) -> dict:
        session = self.connected["session"]
        return {"id": session["persistentIdentifier"], "secret": session["secret"]}

    def send(self, type: str, **fields) -> int:
        request_id = next(Client.ids)
        text = json.dumps({"type": type, "id": request_id, **fields})
        FrameLog.record(self.name, "sent", text)
        self.ws.send(text)
        return request_id

    def send_raw(self, data: str | bytes) -> None:
        """Sends a frame as it is: text that need not be JSON, or a binary frame."""
        if isinstance(data, str):
            FrameLog.record(self.name, "sent", data)
        self.ws.send(data)

    def _next(self, timeout: float) -> dict:
        try:
            text = self.ws.recv(timeout=timeout)
            FrameLog.record(self.name, "received", text)
            return json.loads(text)
        except ConnectionClosed as closed:
            self.closed_code = closed.rcvd.code if closed.rcvd else None
            raise Closed(self.closed_code) from closed

    def reply(self, request_id: int, timeout: float = 15) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(max(0.01, deadline - time.monotonic()))
            if message.get("type") == "reply" and message.get("re") == request_id:
                return message
            self.events.append(message)

    def request(self, type: str, timeout: float = 15, **fields) -> dict:
        reply = self.reply(self.send(type, **fields), timeout)
        if not reply.get("ok"):
            raise RuntimeError(f"{type} failed: {reply.get('error')}")
        return reply["result"]

    def event(self, name: str, where=lambda e: True, timeout: float = 15) -> dict:
        """The first event of that name (already received or still to come) that matches."""
        for index, event in enumerate(self.events):
            if event.get("type") == name and where(event):
                return self.events.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(max(0.01, deadline - time.monotonic()))
            if message.get("type") == name and where(message):
                return message
            self.events.append(message)

    def drain(self, seconds: float) -> None:
        """Reads for a while, keeping every event."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(self._next(left))
            except TimeoutError:
                return

    def closed_unacknowledged(self, request_id: int, timeout: float = 15) -> int | None:
        """Reads until the connection closes, failing if the request is answered `ok` first
        (an error answer is allowed); returns the close code."""
        try:
            while True:
                message = self._next(timeout)
                if message.get("type") == "reply" and message.get("re") == request_id:
                    assert not message["ok"], f"acknowledged: {message}"
        except Closed as closed:
            return closed.code

    def wait_closed(self, timeout: float = 15) -> int | None:
        try:
            while True:
                self.events.append(self._next(timeout))
        except Closed as closed:
            return closed.code

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
