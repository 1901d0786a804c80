"""Bad input and limits (issue 11): a cluster node, reached directly or through haproxy,
refuses each bad input exactly as a single SQLite node does. The same inputs run against a
single node in the same test and the structured errors and close codes are compared, so the
two cannot drift apart; the single node's answers are checked against the codes the
single-node suites expect (Tests/PanesServerTests, Tests/web). Nothing stored changes after
a refused input."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Callable

import pytest

from panes_cluster import Client, Closed, Cluster, Node

# Small limits, the same on every server, so each is reached with a few bytes or requests.
SETTINGS = {"maxMessageBytes": 8192, "maxUserInfoBytes": 512, "maxPreferenceValueBytes": 256,
            "rateLimitPerSecond": 1, "rateLimitBurst": 12}
BURST = SETTINGS["rateLimitBurst"]


class Target:
    """One way of reaching a server, with the document and session the cases work on."""

    def __init__(self, name: str, url: str, workspace: str, setup_url: str | None = None) -> None:
        self.name, self.url, self.workspace = name, url, workspace
        # Set up through another node when there is one: the cases then reach state written elsewhere.
        setup = Client(setup_url or url, "ada", workspace)
        self.document = setup.request("createDocument", title="Parity", text="hello world")["document"]["id"]
        setup.request("setPreference", domain="user", keyPath="editor.theme", value="dark")
        setup.request("setPreference", domain="workspace", keyPath="team.name", value="Panes")
        setup.close()
        self.sessions: list[dict] = []  # credentials of the sessions whose userInfo must not change

    def client(self, **kwargs) -> Client:
        return Client(self.url, "ada", self.workspace, **kwargs)

    def state(self) -> dict:
        """What is stored, as any client reads it: the document and both preference domains."""
        reader = self.client()
        opened = reader.request("openDocument", document=self.document)
        state = {"document": [opened["revision"], opened["text"]]}
        for domain, key in (("user", "editor"), ("workspace", "team")):
            reader.request("observe", domain=domain, keyPath=key, options=["initial"])
            initial = reader.event("preferenceChanged", lambda e, d=domain: e["domain"] == d)
            state[domain] = [initial.get("version"), initial.get("new")]
        reader.close()
        return state

    def user_infos(self) -> list:
        """The userInfo of each session the cases refused writes to, resumed."""
        infos = []
        for credentials in self.sessions:
            resumed = self.client(session=credentials)
            infos.append(resumed.connected["session"]["userInfo"])
            resumed.close()
        return infos


def answer(client: Client, request_id: int | None = None) -> dict:
    """The reply to `request_id` (already received or still to come; without one, the next
    reply without `re`), or how the socket closed."""
    for index, message in enumerate(client.events):
        if message.get("type") == "reply" and request_id is not None and message.get("re") == request_id:
            return client.events.pop(index)
    try:
        while True:
            message = client._next(15)
            if message.get("type") == "reply" and (request_id is None or message.get("re") == request_id):
                return message
            client.events.append(message)
    except Closed as closed:
        return {"closed": closed.code}


def ask(client: Client, type: str, **fields) -> dict:
    return answer(client, client.send(type, **fields))


# Each case: a name, what the single node answers (error codes or close codes, in order: the
# suites' expectations), and the inputs, sent on a fresh socket of its own (each socket has
# its own rate limit). A case returns what it got back.


def not_json(t: Target) -> list:
    c = t.client()
    c.send_raw("{not json")
    return [answer(c)]


def not_a_request(t: Target) -> list:
    c = t.client()
    c.send_raw("[1, 2, 3]")
    first = answer(c)
    c.send_raw(json.dumps({"id": 7, "type": 5}))
    return [first, answer(c)]


def unknown_type(t: Target) -> list:
    return [ask(t.client(), "warp", speed=9)]


def before_connect(t: Target) -> list:
    c = t.client(connect=False)
    return [ask(c, "ping"), ask(c, "connect", protocol=99, auth={"name": "ada"}, workspace=t.workspace)]


def connect_twice(t: Target) -> list:
    c = t.client()
    return [ask(c, "connect", protocol=1, auth={"name": "ada"}, workspace=t.workspace)]


def missing_and_invalid_fields(t: Target) -> list:
    c = t.client()
    return [ask(c, "lifecycle", visible=True), ask(c, "setPreference", domain="user", keyPath="editor.theme"),
            ask(c, "lifecycle", visible="yes", focused=True), ask(c, "openDocument")]


def user_info(t: Target) -> list:
    c = t.client()
    assert ask(c, "setUserInfo", userInfo={"kept": True})["ok"]
    t.sessions.append(c.credentials)
    got = [ask(c, "setUserInfo", userInfo="not an object"),
           ask(c, "setUserInfo", userInfo={"pad": "x" * SETTINGS["maxUserInfoBytes"]}),
           ask(c, "setUserInfo", userInfo={"kept": False}, mode="sideways")]
    c.close()
    return got


def preferences(t: Target) -> list:
    c = t.client()
    return [ask(c, "setPreference", domain="user", keyPath="editor..theme", value="light"),
            ask(c, "setPreference", domain="team", keyPath="editor.theme", value="light"),
            ask(c, "setPreference", domain="user", keyPath="editor.theme", value="x" * SETTINGS["maxPreferenceValueBytes"]),
            ask(c, "setPreference", domain="user", keyPath="editor.theme.dark", value=True),
            ask(c, "setPreference", domain="user", keyPath="editor.theme", value="light", ifVersion=10_000)]


def deep_and_huge_values(t: Target) -> list:
    c = t.client()
    c.send_raw(json.dumps({"type": "setPreference", "id": 1, "domain": "user", "keyPath": "editor.deep",
                           "value": json.loads("[" * 100 + "]" * 100)}))
    deep = answer(c)
    c.send_raw('{"type":"setPreference","id":2,"domain":"user","keyPath":"editor.big","value":1e400}')
    huge = answer(c)
    c.send_raw('{"type":"setPreference","id":3,"domain":"user","keyPath":"editor.big","value":18446744073709551616}')
    return [deep, huge, answer(c)]


def edits(t: Target) -> list:
    c = t.client()
    before_open = ask(c, "edit", document=t.document, revision=0, operation=["x", 11], opId="e0")
    c.request("openDocument", document=t.document)
    return [before_open,
            ask(c, "edit", document=t.document, revision=99, operation=["x", 11], opId="e1"),
            ask(c, "edit", document=t.document, revision=-1, operation=["x", 11], opId="e2"),
            ask(c, "edit", document=t.document, revision=0, operation=[100], opId="e3"),
            ask(c, "edit", document=t.document, revision=0, operation=[1, 0, 10], opId="e4"),
            ask(c, "edit", document=t.document, revision=0, operation="x", opId="e5"),
            ask(c, "edit", document=t.document, revision=0, operation=["x", 11]),
            ask(c, "setPresence", document=t.document, selection={"anchor": 0, "head": 5}, revision=99)]


def unknown_document(t: Target) -> list:
    c = t.client()
    return [ask(c, "openDocument", document="doc_nosuchdocument"),
            ask(c, "edit", document="doc_nosuchdocument", revision=0, operation=["x"], opId="u1")]


def over_the_frame_limit(t: Target) -> list:
    c = t.client()
    c.send_raw(json.dumps({"type": "ping", "id": 1, "pad": "x" * SETTINGS["maxMessageBytes"]}))
    return [answer(c)]


def binary_frame(t: Target) -> list:
    c = t.client()
    c.send_raw(b"\x01\x02\x03")
    return [answer(c)]


def rate_limit_burst(t: Target) -> list:
    c = t.client(connect=False)
    # Sent at once, so no token comes back between them: `connect` and BURST - 1 pings use the
    # burst up, and the writes behind them are refused (and not stored). Replies that reveal
    # nothing stored may overtake the connect's, which waits for its session to be durable.
    ids = [c.send("connect", protocol=1, auth={"name": "ada"}, workspace=t.workspace)]
    ids += [c.send("ping") for _ in range(BURST - 1)]
    ids += [c.send("setPreference", domain="user", keyPath="editor.theme", value="light"),
            c.send("edit", document=t.document, revision=0, operation=["x", 11], opId="r1"),
            c.send("setPreference", domain="workspace", keyPath="team.name", value="Other")]
    return [answer(c, request_id) for request_id in ids]


def requests_behind_a_resuming_connect(t: Target) -> list:
    # Sent without waiting for the connect's reply: a node claims the session first (a single
    # node may ask the old window), and what came behind the connect is answered after it.
    first = t.client()
    credentials = first.credentials
    first.close()
    c = t.client(connect=False)
    ids = [c.send("connect", protocol=1, auth={"name": "ada"}, workspace=t.workspace, session=credentials),
           c.send("listSessions"), c.send("ping")]
    return [answer(c, request_id) for request_id in ids]


CASES: list[tuple[Callable[[Target], list], list]] = [
    (not_json, ["malformed_json"]),
    (not_a_request, ["invalid_message", "invalid_message"]),
    (unknown_type, ["unknown_type"]),
    (before_connect, ["not_connected", "unsupported_protocol"]),
    (connect_twice, ["already_connected"]),
    (missing_and_invalid_fields, ["missing_field", "missing_field", "invalid_field", "missing_field"]),
    (user_info, ["invalid_field", "too_large", "invalid_field"]),
    (preferences, ["invalid_key_path", "unknown_domain", "too_large", "key_path_conflict", "version_conflict"]),
    (deep_and_huge_values, ["nesting_too_deep", "number_out_of_range", "number_out_of_range"]),
    (edits, ["document_not_open", "revision_in_future", "invalid_field", "invalid_operation", "invalid_operation",
             "invalid_operation", "missing_field", "revision_in_future"]),
    (unknown_document, ["document_not_found", "document_not_found"]),
    (over_the_frame_limit, [1009]),
    (binary_frame, [1003]),
    (rate_limit_burst, [None] * BURST + ["rate_limited"] * 3),
    (requests_behind_a_resuming_connect, [None, None, None]),
]


IDENTIFIER = re.compile(r"\b([a-z]{2,5})_[0-9a-z]{10,}\b")


def structured(answers: list) -> list:
    """What a client acts on in each answer: the error's code, number, action, field and
    message (identifiers, which differ between servers, made neutral), retryAfterMs checked and made
    neutral, or the close code. Request ids are left out."""
    shown = []
    for reply in answers:
        if "closed" in reply:
            shown.append({"closed": reply["closed"]})
            continue
        if reply["ok"]:
            shown.append({"ok": True, "request": reply.get("request")})
            continue
        error = dict(reply["error"])
        if "retryAfterMs" in error:
            assert 0 < error["retryAfterMs"] <= 1000 / SETTINGS["rateLimitPerSecond"], error
            error["retryAfterMs"] = "(ms)"
        error["message"] = IDENTIFIER.sub(r"\1_(id)", error["message"])
        shown.append({"ok": False, "request": reply.get("request"), **error})
    return shown


def code_of(answer: dict):
    return answer.get("closed") or answer.get("code")


@pytest.fixture
def single(pg) -> Node:
    """One node on SQLite with the same configuration as the cluster's nodes."""
    folder = Path(tempfile.mkdtemp(prefix="panes-single-"))
    config = folder / "config.json"
    config.write_text(json.dumps({"settings": SETTINGS}))
    node = Node("sqlite", "http://127.0.0.1", config, index=-1, args=["--data", str(folder / "data")]).start()
    yield node
    node.stop()


def test_bad_input_and_limits_are_refused_as_on_one_node(pg, single, workspace):
    cluster = Cluster(pg, nodes=2, settings=SETTINGS)
    try:
        node_url = cluster.nodes[1].url
        targets = [Target("single node", single.url, workspace),
                   Target("cluster node", node_url, workspace, setup_url=cluster.nodes[0].url),
                   Target("haproxy", cluster.url, workspace + "lb", setup_url=cluster.nodes[0].url)]
        before = [target.state() for target in targets]
        tables = stored_rows(cluster)
        for case, expected in CASES:
            got = [structured(case(target)) for target in targets]
            assert [code_of(a) for a in got[0]] == expected, f"{case.__name__} on one node: {got[0]}"
            for target, answers in zip(targets[1:], got[1:]):
                assert answers == got[0], f"{case.__name__} through the {target.name}:\n{answers}\none node:\n{got[0]}"
        assert [target.state() for target in targets] == before, "a refused input changed what is stored"
        for target in targets:
            assert target.user_infos() == [{"kept": True}], f"a refused setUserInfo was kept ({target.name})"
        assert stored_rows(cluster) == tables, "a refused input changed a table"
    finally:
        cluster.close()


def stored_rows(cluster: Cluster) -> str:
    """The cluster's stored preferences, their log and its documents and operations (sessions
    are left out: each case's socket makes one; their userInfo is in `Target.state`)."""
    database = cluster.store.rsplit("/", 1)[1]
    return "\n".join(cluster.pg.psql(sql, database=database) for sql in (
        "SELECT workspace, user_name, key_path, value, version FROM preferences ORDER BY 1, 2, 3",
        "SELECT workspace, user_name, version, key_path, value FROM preference_changes ORDER BY 1, 2, 3",
        "SELECT workspace, user_name, version FROM preference_domains ORDER BY 1, 2",
        "SELECT id, revision, length, title FROM documents ORDER BY id",
        "SELECT document, revision, operation FROM document_operations ORDER BY 1, 2",
        "SELECT document, revision, text FROM document_snapshots ORDER BY 1"))

