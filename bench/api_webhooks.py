#!/usr/bin/env python3
"""Issue 26's measurements (a benchmark, never a test): HTTP API write latency, and webhook
delivery latency, at a steady rate of changes to a local receiver.

    python3 bench/api_webhooks.py --binary .build/release/panes --rate 1000 --seconds 10

One `panes serve` on SQLite (`--sync` as given, default full) with an API key and one webhook
endpoint (`webhookCoalesceMs` 0, so every change is its own event: the worst case for
delivery). `--workers` threads, each with a kept-alive HTTP connection, send
`POST …/documents/{id}/operations` (an insert of one character, each worker in documents of
its own, `--documents` of them in turn) paced together to `--rate` a second, for `--seconds`.

- API write latency: from the request's first byte sent to its answer read (the answer
  follows the commit's fsync), per request.
- Webhook delivery latency: from the change (the event's `timestamp`, the server's clock when
  it applied the change) to the receiver reading the delivery (the same machine's clock), for
  each event's first delivery. The receiver is a threaded Python HTTP/1.1 server that answers
  204 at once and checks nothing (the signature is the tests' business).

Prints the figures; `--json FILE` writes them. The machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Receiver:
    def __init__(self) -> None:
        self.arrivals: dict[str, float] = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_):
                pass

            def do_POST(self):
                now = time.time()
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                event_id = self.headers.get("webhook-id", "")
                with receiver.lock:
                    if event_id not in receiver.arrivals:
                        stamp = json.loads(body)["timestamp"]
                        created = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
                        receiver.arrivals[event_id] = now - created
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/panes")
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--documents", type=int, default=4, help="documents per worker")
    parser.add_argument("--sync", default="full")
    parser.add_argument("--json")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="panes-bench-api-"))
    lines = subprocess.run([args.binary, "apikey", "create", "--id", "bench", "--workspace", "bench", "--access", "write"],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    secret = lines[1]
    (folder / "keys.json").write_text(json.dumps({"keys": [json.loads(lines[3])]}))
    receiver = Receiver()
    (folder / "config.json").write_text(json.dumps({
        "webhooks": [{"id": "bench", "url": f"http://127.0.0.1:{receiver.port}/hooks", "secret": SECRET,
                      "events": ["document.changed"]}],
        "settings": {"webhookCoalesceMs": 0, "webhookEndpointConcurrency": 16, "apiRateLimitPerSecond": 1_000_000,
                     "apiRateLimitBurst": 1_000_000, "maxHTTPRequestsInFlight": 4096}}))
    server = subprocess.Popen([args.binary, "serve", "--port", "0", "--data", str(folder / "data"), "--sync", args.sync,
                               "--config", str(folder / "config.json"), "--api-keys", str(folder / "keys.json"),
                               "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r":(\d+) ", server.stdout.readline()).group(1))
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}

    def call(connection, method, path, body=None):
        connection.request(method, "/api/v1/workspaces/bench" + path, body=json.dumps(body) if body is not None else None,
                           headers=headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())

    setup = http.client.HTTPConnection("127.0.0.1", port)
    documents = [[call(setup, "POST", "/documents", {"title": f"d{w}-{d}", "text": ""})[1]["document"]["id"]
                  for d in range(args.documents)] for w in range(args.workers)]
    total = int(args.rate * args.seconds)
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    start = time.monotonic() + 0.5
    load_before = os.getloadavg()

    def worker(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port)
        revisions = {doc: 0 for doc in documents[index]}
        mine = []
        n = index
        while n < total:
            due = start + n / args.rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            doc = documents[index][(n // args.workers) % args.documents]
            sent = time.monotonic()
            status, body = call(connection, "POST", f"/documents/{doc}/operations",
                                {"revision": revisions[doc], "operation": [revisions[doc], "x"] if revisions[doc] else ["x"]})
            mine.append(time.monotonic() - sent)
            if status == 200:
                revisions[doc] = body["revision"]
            else:
                with lock:
                    failures[0] += 1
            n += args.workers
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    deadline = time.monotonic() + 60
    while len(receiver.arrivals) < total - failures[0] and time.monotonic() < deadline:
        time.sleep(0.1)
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)
    delivered = list(receiver.arrivals.values())
    figures = {
        "binary": args.binary, "rate": args.rate, "seconds": args.seconds, "sync": args.sync, "writes": total,
        "achievedRate": round(total / elapsed), "failures": failures[0],
        "apiWriteP50Ms": round(percentile(latencies, 50) * 1000, 2), "apiWriteP99Ms": round(percentile(latencies, 99) * 1000, 2),
        "events": len(delivered),
        "webhookP50Ms": round(percentile(delivered, 50) * 1000, 1), "webhookP99Ms": round(percentile(delivered, 99) * 1000, 1),
        "loadavgBefore": [round(x, 2) for x in load_before], "loadavgAfter": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }
    for key, value in figures.items():
        print(f"{key:16} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
