"""Running panes-load: one process, or several when one cannot hold enough sockets.

panes-load prints a JSON `ready` line once every connection has settled and a
`result` line at the end; with --wait-go it waits for "go" on stdin before
measuring, and with --hold -1 it holds its connections until stdin closes.
"""
from __future__ import annotations

import json
import queue
import threading
import time
from typing import Optional

from . import procs, setup

# The per-process cap is 20,000 open files; keep room for the rest of the process.
MAX_PER_PROCESS = 16000


class Generator:
    def __init__(self, args: list[str], log: str):
        self.argv = [setup.binary("panes-load"), *args]
        self.proc = procs.start(self.argv, log=log, stdin=True)
        self.events: "queue.Queue[Optional[dict]]" = queue.Queue()
        self.ready: Optional[dict] = None
        self.result: Optional[dict] = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.proc.stdout:
                try:
                    self.events.put(json.loads(line))
                except json.JSONDecodeError:
                    pass
        except (OSError, ValueError):
            pass
        self.events.put(None)

    def wait(self, event: str, timeout: float) -> Optional[dict]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                item = self.events.get(timeout=left)
            except queue.Empty:
                return None
            if item is None:
                return None
            if item.get("event") == "ready":
                self.ready = item
            elif item.get("event") == "result":
                self.result = item
            if item.get("event") == event:
                return item

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def finish(self, timeout: float) -> Optional[dict]:
        if self.result is None:
            self.wait("result", timeout)
        try:
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            pass
        procs.stop(self.proc)
        return self.result


def split(n: int) -> list[int]:
    """Connections per process: as few processes as the file cap allows, evenly loaded."""
    k = max(1, -(-n // MAX_PER_PROCESS))
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def source_address(k: int, processes: int) -> list[str]:
    """Each process its own loopback source address once there is more than one (own port space)."""
    return ["--sources", f"127.0.0.{11 + k}"] if processes > 1 else []


def hold(ctx, system, port: int, n: int, workdir: str, *, timeout: Optional[float] = None,
         name: str = "hold", sessions_out: Optional[str] = None,
         connect_timeout: Optional[float] = None) -> tuple[list[Generator], list[Optional[dict]]]:
    """N idle connections (Panes: scenes, 100 per user), held until `release`; (generators, readies).

    Past the per-process file cap they are spread over several processes, each with its own
    loopback source address. `timeout` bounds how long they may be held (default: one run's).
    `sessions_out` (Panes): process k writes its scenes' sessions to `<sessions_out>.<k>`.
    `connect_timeout`: one connection's limit, where the default 10 s is not the point (setting up).
    """
    import os
    parts = split(n)
    gens, offset = [], 0
    for k, part in enumerate(parts):
        args = ["connect", "--protocol", system.protocol, "--port", str(port), "--n", str(part),
                "--hold", "-1", "--first-index", str(offset), "--concurrency", str(max(32, 256 // len(parts))),
                "--quiet", "--timeout", str(timeout or ctx.timeout), *source_address(k, len(parts)),
                *(["--sessions-out", f"{sessions_out}.{k}"] if sessions_out else []),
                *(["--connect-timeout", str(connect_timeout)] if connect_timeout else []),
                *system.generator_args(ctx, "connect", n)]
        gens.append(Generator(args, os.path.join(workdir, f"{name}-{k}.log")))
        offset += part
    return gens, [g.wait("ready", timeout or ctx.timeout) for g in gens]


def release(gens: list[Generator], readies: list[Optional[dict]]) -> list[Optional[dict]]:
    """Lets held connections go; each process's result (or its ready line if it gave none)."""
    for g in gens:
        g.close_stdin()
    return [g.finish(30) or r for g, r in zip(gens, readies)]
