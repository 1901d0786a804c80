"""Issue 27, sections 1 and 2, across nodes: answers that tell the truth and writes applied
once, whatever the client retries. Every state-changing request sent with an `idempotencyKey`
and retried through another node after its reply was lost is applied once and answered as the
first attempt was; two retries racing through two nodes apply once; and under PostgreSQL
restarts (fast and immediate), backends terminated mid-commit, and nodes losing their lease,
nothing answered as failed is ever present afterwards, everything answered as succeeded is
present once, and every node agrees."""

from __future__ import annotations

import random
import secrets
import threading
import time

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from panes_cluster import Client, Closed, Cluster


def documents(client: Client, title: str | None = None) -> list[dict]:
    listed = client.request("observeDocuments")["documents"]
    client.request("unobserveDocuments")
    return [d for d in listed if title is None or d["title"] == title]


def sessions(client: Client) -> list[dict]:
    return client.request("listSessions")["sessions"]


def preference_version(client: Client, key_path: str) -> int:
    client.request("observe", domain="user", keyPath=key_path, options=["initial"])
    return client.event("preferenceChanged", lambda e: e["keyPath"] == key_path)["version"]


# Each write type: (prepare(client) -> fields, count(client, fields) -> how often it is applied).
WRITES = {
    "setUserInfo": (lambda c: {"userInfo": {"n": 1}, "mode": "merge"},
                    lambda c, f: 1 if c.connected["session"]["userInfo"].get("n") == 1 else 0),
    "updateActivity": (lambda c: {"activity": {"activityType": "panes.document", "title": "Kept"}},
                       lambda c, f: 1),
    "setPreference": (lambda c: {"domain": "user", "keyPath": "editor.fontSize", "value": 18, "ifVersion": 0},
                      lambda c, f: preference_version(c, "editor.fontSize")),
    "removePreference": (lambda c: (c.request("setPreference", domain="user", keyPath="editor.theme", value="dark"),
                                    {"domain": "user", "keyPath": "editor.theme", "ifVersion": 1})[1],
                         lambda c, f: 1 if preference_version(c, "editor.theme") == 0 else 0),
    "createDocument": (lambda c: {"title": "Once " + secrets.token_hex(3)},
                       lambda c, f: len(documents(c, f["title"]))),
    "renameDocument": (lambda c: {"document": c.request("createDocument", title="Before")["document"]["id"],
                                  "title": "After " + secrets.token_hex(3)},
                       lambda c, f: len(documents(c, f["title"]))),
    "deleteDocument": (lambda c: {"document": c.request("createDocument", title="Doomed")["document"]["id"]},
                       lambda c, f: 1 - len([d for d in documents(c) if d["id"] == f["document"]])),
    "requestActivation": (lambda c: {"activity": {"activityType": "panes.document", "title": "Opened " + secrets.token_hex(3),
                                                  "targetContentIdentifier": "doc_" + secrets.token_hex(3)}},
                          lambda c, f: len([s for s in sessions(c) if s["title"] == f["activity"]["title"]])),
    "requestRefresh": (lambda c: {"session": c.request("requestActivation", activity={"activityType": "panes.document"})["session"],
                                  "title": "Refreshed " + secrets.token_hex(3)},
                       lambda c, f: len([s for s in sessions(c) if s["title"] == f["title"]])),
    "requestDestruction": (lambda c: {"session": c.request("requestActivation", activity={"activityType": "panes.document"})["session"]},
                           lambda c, f: 1 - len([s for s in sessions(c) if s["persistentIdentifier"] == f["session"]])),
    "beginDrag": (lambda c: {"items": [{"activity": {"activityType": "panes.document"}}]}, lambda c, f: 1),
    "drop": (lambda c: {"drag": c.request("beginDrag", items=[{"activity": {"activityType": "panes.document",
                                                                            "title": "Dropped " + secrets.token_hex(3)}}])["drag"],
                        "target": "newWindow"},
             None),
    "cancelDrag": (lambda c: {"drag": c.request("beginDrag", items=[{"activity": {"activityType": "panes.document"}}])["drag"]},
                   lambda c, f: 1),
}


def answered(client: Client, type: str, key: str, fields: dict, timeout: float = 30) -> dict:
    """Sends the request with its key until it is answered with something other than
    `outcome_unknown` (which says: resend with the key to learn what happened)."""
    deadline = time.monotonic() + timeout
    while True:
        reply = client.reply(client.send(type, idempotencyKey=key, **fields), timeout=20)
        if reply["ok"] or reply["error"]["code"] != "outcome_unknown" or time.monotonic() > deadline:
            return reply
        time.sleep(reply["error"].get("retryAfterMs", 200) / 1000)


def test_every_write_type_retried_through_another_node_is_applied_once(cluster, workspace):
    a, b = cluster.nodes
    for type, (prepare, count) in WRITES.items():
        user = "u" + secrets.token_hex(3)
        first = Client(a.url, user, workspace)
        credentials = first.credentials
        fields = prepare(first)
        key = f"{type}-{secrets.token_hex(4)}"
        # Its reply is lost: the socket goes right behind the request.
        first.send(type, idempotencyKey=key, **fields)
        first.close()
        second = Client(b.url, user, workspace, session=credentials)
        retry = answered(second, type, key, fields)
        assert retry["ok"], f"{type} retried through the other node: {retry}"
        again = answered(second, type, key, fields)
        assert again["result"] == retry["result"], f"{type}: every retry gets the same answer"
        if type == "drop":
            count = lambda c, f: len([s for s in sessions(c) if s["title"].startswith("Dropped ")])  # noqa: E731
        if type == "setUserInfo":
            second.close()
            second = Client(b.url, user, workspace, session=credentials)
        assert count(second, fields) == 1, f"{type} applied once"
        # And node a, reading what b wrote, agrees.
        on_a = Client(a.url, user, workspace)
        if type not in ("setUserInfo", "updateActivity", "beginDrag", "cancelDrag"):
            deadline = time.monotonic() + 10
            while count(on_a, fields) != 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert count(on_a, fields) == 1, f"{type}: node a agrees"
        for client in (second, on_a):
            client.close()


def test_the_same_key_sent_through_two_nodes_at_once_is_applied_once(cluster, workspace):
    a, b = cluster.nodes
    for round in range(8):
        user = "race" + secrets.token_hex(3)
        left, right = Client(a.url, user, workspace), Client(b.url, user, workspace)
        key, title = f"race-{round}", f"Raced {round} {secrets.token_hex(3)}"
        replies: list[dict] = []

        def send(client: Client) -> None:
            replies.append(answered(client, "createDocument", key, {"title": title}))

        threads = [threading.Thread(target=send, args=(c,)) for c in (left, right)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(r["ok"] for r in replies), replies
        assert replies[0]["result"] == replies[1]["result"], "both answered with the one outcome"
        for client in (left, right):
            # The other node's document reaches this one through the database's notice.
            deadline = time.monotonic() + 10
            while not documents(client, title) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(documents(client, title)) == 1, f"round {round}: one document on every node"
            client.close()


class Writer:
    """A user writing with keys as the JavaScript client does: a request keeps its key until it
    is answered; after a lost connection it reconnects (through haproxy: any node) and sends
    it again, after `outcome_unknown` it sends it again. `storage_failed` is final: it says
    nothing was applied, which the checks below hold the server to."""

    def __init__(self, url: str, workspace: str, index: int) -> None:
        self.url, self.workspace = url, workspace
        self.name = f"w{index}-{secrets.token_hex(2)}"
        self.rng = random.Random(index)
        self.client: Client | None = None
        self.credentials: dict | None = None
        self.outcomes: dict[str, str] = {}      # document title -> ok | failed | unknown
        self.version = 0                        # the compare-and-set chain on editor.count
        self.set = 0                            # its writes answered ok
        self.deleted: dict[str, str] = {}       # document title -> ok | failed, for deletions
        self.stats = {"outcome_unknown": 0, "storage_failed": 0, "reconnects": 0, "conflicts": 0}
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.history: list[str] = []            # what each attempt was answered, for a failure's message
        self.reconnect()

    def reconnect(self) -> None:
        deadline = time.monotonic() + 90
        while True:
            try:
                self.client = Client(self.url, self.name, self.workspace, session=self.credentials, timeout=20)
                break
            except Exception:  # refused, a 502/503 from haproxy, storage_failed while the database is down
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.credentials = self.client.credentials
        self.stats["reconnects"] += 1

    def send(self, type: str, key: str, fields: dict) -> dict | None:
        """The request's final answer, or None when it stayed unknown for too long."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                reply = self.client.reply(self.client.send(type, idempotencyKey=key, **fields), timeout=20)
            except (Closed, ConnectionClosed, InvalidHandshake, TimeoutError, OSError) as lost:
                self.history.append(f"{time.monotonic():.2f} {key} lost: {lost!r}")
                self.reconnect()
                continue
            self.history.append(f"{time.monotonic():.2f} {key} via {self.client.connected['scene']}: "
                                f"{reply.get('result') or reply.get('error', {}).get('code')}")
            if reply["ok"]:
                return reply
            code = reply["error"]["code"]
            if code in ("outcome_unknown", "rate_limited", "server_draining", "storage_failed") and code in self.stats:
                self.stats[code] += 1
            if code in ("outcome_unknown", "rate_limited", "server_draining"):
                time.sleep(reply["error"].get("retryAfterMs", 200) / 1000)
                continue
            return reply
        return None

    def run(self) -> None:
        try:
            count = 0
            while not self.stop.is_set():
                count += 1
                title = f"{self.name} #{count}"
                reply = self.send("createDocument", f"{self.name}-c{count}", {"title": title})
                self.outcomes[title] = "unknown" if reply is None else "ok" if reply["ok"] else "failed"
                if reply and not reply["ok"]:
                    assert reply["error"]["code"] == "storage_failed", reply
                reply = self.send("setPreference", f"{self.name}-p{count}",
                                  {"domain": "user", "keyPath": "editor.count", "value": count, "ifVersion": self.version})
                if reply and reply["ok"]:
                    self.version = reply["result"]["version"]
                    self.set += 1
                elif reply:
                    assert reply["error"]["code"] != "version_conflict", \
                        "a compare-and-set lost to its own first attempt:\n" + "\n".join(self.history[-12:])
                    assert reply["error"]["code"] == "storage_failed", reply
                if count % 3 == 0 and self.outcomes.get(title) == "ok":
                    try:
                        doc = next((d for d in documents(self.client, title)), None)
                    except (Closed, ConnectionClosed, InvalidHandshake, TimeoutError, OSError, RuntimeError):
                        self.reconnect()
                        continue
                    if doc:
                        reply = self.send("deleteDocument", f"{self.name}-d{count}", {"document": doc["id"]})
                        self.deleted[title] = "unknown" if reply is None else "ok" if reply["ok"] else "failed"
        except BaseException as error:  # reported by the test
            self.error = error


def faults(cluster: Cluster, stop: threading.Event) -> list[str]:
    """PostgreSQL restarted (fast, then as a crash), and backends terminated mid-commit."""
    done: list[str] = []
    database = cluster.store.rsplit("/", 1)[1]
    for step in ("fast", "terminate", "immediate", "terminate"):
        time.sleep(1.5)
        if step == "terminate":
            cluster.pg.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            f"WHERE datname = '{database}' AND pid <> pg_backend_pid()", database=database)
        else:
            cluster.pg.stop_server(step)
            time.sleep(2.0)
            cluster.pg.start_server()
        done.append(step)
    stop.set()
    return done


def check(cluster: Cluster, workspace: str, writers: list[Writer]) -> None:
    for writer in writers:
        if writer.error is not None:
            for node in cluster.nodes:
                print(f"--- node {node.index}")
                print("".join(line for line in node.log if writer.name in line or "outcome" in line
                              or "held" in line or "lease" in line)[-6000:])
        assert writer.error is None, f"{writer.name}: {writer.error}"
    def reader(index: int) -> Client:
        # A node whose lease ended in the outage refuses upgrades (503) until it serves again
        # under its new identity, which can be just now: the reader retries as a window would,
        # and the refusal must say that the node is rejoining, not that it is draining. A node
        # that learns only after the upgrade that its lease ended closes the new scene with
        # 4011 ("reconnect"), and the reader reconnects as told.
        deadline = time.monotonic() + 30
        while True:
            try:
                return Client(cluster.nodes[index].url, "reader", workspace)
            except InvalidStatus as refused:
                body = bytes(refused.response.body or b"").decode(errors="replace")
                assert refused.response.status_code == 503 and "rejoining" in body, body
            except Closed as closed:
                assert closed.code == 4011, f"node {index} closed a reader's connect with {closed.code}"
            assert time.monotonic() < deadline, f"node {index} still rejoining after 30 s"
            time.sleep(0.1)

    readers = [reader(index) for index in range(len(cluster.nodes))]

    def listing(index: int) -> list[dict]:
        # A node whose lease ended in the outage closes its scenes (4011) and rejoins under a new
        # identity, which can be just now: the reader connects again, as a window would.
        try:
            return documents(readers[index])
        except (Closed, ConnectionClosed, TimeoutError):
            readers[index] = reader(index)
            return documents(readers[index])

    # Each node reads what the others wrote through the database's notices: a moment.
    deadline = time.monotonic() + 30
    ids: dict[str, str] = {}
    while True:
        listed = [listing(index) for index in range(len(readers))]
        ids = {d["title"]: d["id"] for listing in listed for d in listing}
        listings = [sorted(d["title"] for d in listing) for listing in listed]
        if all(listing == listings[0] for listing in listings) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for reader in readers:
        reader.close()
    if not all(listing == listings[0] for listing in listings):
        differ = set(listings[0]) ^ set().union(*map(set, listings[1:]))
        wanted = [ids[title] for title in differ if title in ids]
        for node in cluster.nodes:
            print(f"--- node {node.index}")
            print("".join(line for line in node.log if any(id in line for id in wanted) or "left out" in line
                          or "transaction" in line or "held" in line or "commit" in line)[-8000:])
    database = cluster.store.rsplit("/", 1)[1]
    for index, listing in enumerate(listings[1:], start=1):
        differ = sorted(set(listing) ^ set(listings[0]))
        stored = {title: cluster.pg.psql(f"SELECT count(*) FROM documents WHERE workspace = '{workspace}' "
                                         f"AND title = '{title}'", database=database) for title in differ}
        outcomes = {title: [w.outcomes.get(title) for w in writers if title in w.outcomes] for title in differ}
        assert listing == listings[0], (f"node {index} and node 0 list different documents: only on node {index} "
                                        f"{sorted(set(listing) - set(listings[0]))}, only on node 0 "
                                        f"{sorted(set(listings[0]) - set(listing))}; in the database {stored}; "
                                        f"answered {outcomes}")
    present = listings[0]
    for writer in writers:
        for title, outcome in writer.outcomes.items():
            deleted = writer.deleted.get(title)
            if outcome == "ok" and deleted is None:
                assert present.count(title) == 1, f"{title}: answered ok, so present once"
            if outcome == "ok" and deleted == "ok":
                assert present.count(title) == 0, f"{title}: deleted, answered ok, so gone"
            if outcome == "failed":
                assert present.count(title) == 0, f"{title}: answered storage_failed, so never applied"
            assert present.count(title) <= 1, f"{title}: applied at most once"
        for node in cluster.nodes:
            # A node reads another's changes when notified (or on its next look after losing
            # its notices): a moment, then it holds what the database holds.
            deadline = time.monotonic() + 30
            while True:
                try:
                    client = Client(node.url, writer.name, workspace)
                    version = preference_version(client, "editor.count")
                    client.close()
                except (Closed, ConnectionClosed, TimeoutError):
                    version = None  # the node closed its scenes to rejoin (4011): ask again
                if version == writer.set or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            if version != writer.set:
                for each in cluster.nodes:
                    print(f"--- node {each.index}")
                    print("".join(line for line in each.log if "preference" in line or "resubscribed" in line
                                  or "listen" in line.lower() or "available" in line)[-5000:])
            stored = cluster.pg.psql(f"SELECT version FROM preference_domains WHERE workspace = '{workspace}' "
                                     f"AND user_name = '{writer.name}'", database=cluster.store.rsplit("/", 1)[1])
            assert version == writer.set, (f"{writer.name}: {writer.set} compare-and-sets answered ok, the domain "
                                           f"is at {version} on node {node.index}, at {stored} in the database; "
                                           f"last answers: " + "\n".join(writer.history[-8:]))


def run_writers(cluster: Cluster, workspace: str, count: int = 4) -> list[Writer]:
    writers = [Writer(cluster.url, workspace, index) for index in range(count)]
    stop = threading.Event()
    for writer in writers:
        writer.stop = stop
    threads = [threading.Thread(target=writer.run) for writer in writers]
    for thread in threads:
        thread.start()
    try:
        faults(cluster, stop)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=180)
    return writers


def test_writes_under_postgres_restarts_tell_the_truth(pg, workspace):
    """Leases long enough that no node closes its scenes: the writes that were in flight when
    the database went are answered by the node that has them (`outcome_unknown` while it
    cannot tell, the truth once it can)."""
    cluster = Cluster(pg, nodes=2, lease_ms=30_000, settings={"commitOutcomeTimeoutMs": 500})
    try:
        writers = run_writers(cluster, workspace)
        check(cluster, workspace, writers)
        totals = {k: sum(w.stats[k] for w in writers) for k in writers[0].stats}
        print(f"\nlong leases: {sum(len(w.outcomes) for w in writers)} documents, {sum(w.set for w in writers)} "
              f"preference writes; {totals}")
    finally:
        cluster.close()


def test_writes_under_postgres_restarts_with_nodes_losing_their_lease_tell_the_truth(pg, workspace):
    """Short leases: an outage closes every scene (4011), and clients retry their unanswered
    writes through whichever node haproxy picks, while the node they left may still hold
    them; the key's reservation lets exactly one attempt in."""
    cluster = Cluster(pg, nodes=2)
    try:
        writers = run_writers(cluster, workspace)
        check(cluster, workspace, writers)
        totals = {k: sum(w.stats[k] for w in writers) for k in writers[0].stats}
        print(f"\nshort leases: {sum(len(w.outcomes) for w in writers)} documents, {sum(w.set for w in writers)} "
              f"preference writes; {totals}")
    finally:
        cluster.close()
