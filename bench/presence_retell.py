#!/usr/bin/env python3
"""What a node's listener blip costs in presence (issue 27): two nodes on a private
PostgreSQL, N scenes on node 1 each sharing a cursor in one document, an observer scene on
node 0. Node 0's LISTEN backend is terminated (`pg_terminate_backend`); node 0 listens again
and asks every node (`scenesWanted`); node 1 answers with its cursors. Counted, for each
binary, alternating in rounds on the same PostgreSQL:

- `events`: the `presence` events the observer got from the blip until past the lease
  (`left`: a cursor left; `shown`: one shown again or moved): what the person sees flicker;
- `payloads`: the NOTIFY payloads (one `pg_notify` each, from PostgreSQL's statement log)
  carrying presence signals, and `signals`: the presence signals in them; `stored`: signals
  too large for a payload, written to `node_signals` instead.

Usage: bench/presence_retell.py --bin BASELINE_DIR --bin DIR [--n 100] [--rounds 2] [--edit]
(`--edit`: a scene on node 1 appends to the document after the cursors are told and before the
blip, so node 1 holds them at a newer revision than it told; none moves.)
Each DIR holds a `panes`. Debug or release binaries count the same.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))

import panes_cluster  # noqa: E402
from panes_cluster import LEASE_MS, Client, Cluster, Postgres, bash  # noqa: E402
from test_cluster_faults import listen_backends  # noqa: E402  (the listener's backend, as the fault test finds it)


def one_run(pg: Postgres, binary: Path, n: int, log: Path, edit: bool = False) -> dict:
    panes_cluster.BINARY = binary
    cluster = Cluster(pg, nodes=2, haproxy=False)
    clients: list[Client] = []
    try:
        a, b = cluster.nodes
        owner = Client(b.url, "owner", "bench")
        document = owner.request("createDocument", title="Plan", text="x" * 200)["document"]["id"]
        clients.append(owner)
        for index in range(n):
            person = Client(b.url, f"p{index}", "bench")
            person.request("openDocument", document=document)
            person.request("setPresence", document=document, selection={"anchor": index, "head": index},
                           name=f"Person {index}", color="#336699")
            clients.append(person)
        deadline = time.monotonic() + 30
        while True:
            observer = Client(a.url, "observer", "bench")
            listed = observer.request("openDocument", document=document)["presence"]
            if len(listed) == n:
                break
            observer.close()
            assert time.monotonic() < deadline, f"node 0 lists {len(listed)} cursors of {n}"
            time.sleep(0.2)
        clients.append(observer)
        if edit:
            # After every cursor was told, an edit that moves none of them (appended at the end).
            clients[1].request("edit", document=document, revision=0, operation=[200, "!"], opId="p0:1")
        observer.drain(0.5)
        observer.events.clear()
        start = log.stat().st_size
        database = cluster.store.rsplit("/", 1)[1]
        while not (before := listen_backends(cluster, a)):
            time.sleep(0.05)
        pg.psql(f"SELECT pg_terminate_backend({before[0]})", database=database)
        while not [pid for pid in listen_backends(cluster, a) if pid not in before]:
            assert time.monotonic() < deadline + 30, "node 0 did not listen again"
            time.sleep(0.05)
        observer.drain((LEASE_MS + 1_500) / 1000)
        events = [e for e in observer.events if e.get("type") == "presence"]
        with log.open("rb") as text:
            text.seek(start)
            written = text.read().decode(errors="replace")
        payloads = signals = stored = 0
        for line in written.splitlines():
            if "DETAIL:" in line and "parameters:" in line and "'panes'" in line and "presence" in line:
                payloads += 1
                signals += len(re.findall(r'"presence":', line))
            if "INSERT INTO node_signals" in line:
                stored += 1
        return {"left": sum(1 for e in events if e.get("left")),
                "shown": sum(1 for e in events if not e.get("left")),
                "payloads": payloads, "signals": signals, "stored": stored}
    finally:
        for client in clients:
            try:
                client.close()
            except Exception:
                pass
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", action="append", required=True, help="a folder holding panes (repeat)")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--edit", action="store_true",
                        help="edit the document (appending, so no cursor moves) after the cursors are told, before the blip")
    arguments = parser.parse_args()
    pg = Postgres()
    try:
        home = Path(bash(f'_postgres_home "{pg.dir}"'))
        pg.psql("ALTER SYSTEM SET log_statement = 'all'")
        pg.psql("SELECT pg_reload_conf()")
        results: dict[str, list[dict]] = {folder: [] for folder in arguments.bin}
        for round_number in range(arguments.rounds):
            order = arguments.bin if round_number % 2 == 0 else list(reversed(arguments.bin))
            for folder in order:
                result = one_run(pg, Path(folder) / "panes", arguments.n, home / "server.log", arguments.edit)
                results[folder].append(result)
                print(json.dumps({"bin": folder, "round": round_number, **result}), flush=True)
        print("\n| binary | N | presence events at the observer (left / shown) | NOTIFY payloads with presence | presence signals | stored signals |")
        print("|---|---|---|---|---|---|")
        for folder, runs in results.items():
            cells = [" / ".join(f"{r['left']}/{r['shown']}" for r in runs),
                     " / ".join(str(r["payloads"]) for r in runs),
                     " / ".join(str(r["signals"]) for r in runs),
                     " / ".join(str(r["stored"]) for r in runs)]
            print(f"| {folder} | {arguments.n} | " + " | ".join(cells) + " |")
    finally:
        pg.close()


if __name__ == "__main__":
    main()
