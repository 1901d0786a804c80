"""Webhook events from real changes: each change a window or the HTTP API makes is written to
the outbox in the change's own store write and arrives once (retries carry the same id), in
order per document; `kill -9` of the server mid-delivery loses nothing."""

from __future__ import annotations

import collections
import time

from api_support import API
from panes_cluster import Client


def distinct(received: list[dict]) -> dict[str, dict]:
    """The events received, by id (a retry repeats an id)."""
    return {r["id"]: r["event"] for r in received}


def documents_only(received: list[dict]) -> list[dict]:
    """The document events received (a window's connect makes a `session.created` too)."""
    return [r for r in received if r["event"]["type"].startswith("document.")]


def test_a_change_by_a_window_and_one_by_the_api_each_make_exactly_one_event(server, api, receiver, workspace):
    doc = api.ok("POST", "/documents", {"title": "Plan", "text": "hi"}, status=201)["document"]["id"]
    alice = Client(server.ws, "alice", workspace)
    alice.request("openDocument", document=doc)
    alice.request("edit", document=doc, revision=0, operation=[2, "!"], opId="a:1")
    api.ok("POST", f"/documents/{doc}/operations", {"revision": 1, "operation": [3, "?"]})
    api.ok("PATCH", f"/documents/{doc}", {"title": "Plan B"})
    alice.request("renameDocument", document=doc, title="Plan C")
    api.ok("DELETE", f"/documents/{doc}")
    receiver.wait(lambda r: len(distinct(documents_only(r))) >= 6)
    time.sleep(0.5)  # nothing more comes
    got = documents_only(receiver.received())
    events = list(distinct(got).values())
    assert all(r["signature_valid"] for r in got)
    assert len(got) == len(events) == 6, [e["type"] for e in events]
    assert [e["type"] for e in events] == ["document.created", "document.changed", "document.changed",
                                           "document.renamed", "document.renamed", "document.deleted"]
    changed = [e for e in events if e["type"] == "document.changed"]
    assert [e["data"]["revisions"] for e in changed] == [{"from": 1, "to": 1}, {"from": 2, "to": 2}]
    assert [e["data"]["actor"]["user"] for e in changed] == ["alice", "api:writer"]
    assert events[0]["data"]["document"] == doc and events[0]["data"]["workspace"] == workspace
    assert events[3]["data"]["title"] == "Plan B" and events[4]["data"]["title"] == "Plan C"
    alice.close()


def test_refused_changes_make_no_event(server, api, keys, receiver, workspace):
    doc = api.ok("POST", "/documents", {"title": "Kept", "text": ""}, status=201)["document"]["id"]
    receiver.wait(lambda r: len(r) == 1)
    reader = api.as_key(keys.secrets["reader"])
    assert reader.call("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": ["x"]}).status == 403
    assert api.call("POST", f"/documents/{doc}/operations", {"revision": 5, "operation": ["x"]}).status == 409
    assert api.call("PATCH", f"/documents/{doc}", {"title": ""}).status in (400, 200)
    viewer_edit = api.as_key(keys.secrets["stranger"]).call("DELETE", f"/documents/{doc}")
    assert viewer_edit.status == 403
    time.sleep(1.0)
    types = [r["event"]["type"] for r in receiver.received()]
    assert types.count("document.created") == 1 and "document.changed" not in types and "document.deleted" not in types


def test_changes_within_the_coalescing_window_go_as_one_event_with_the_range(servers, keys, receiver, workspace):
    server = servers(receiver, webhookCoalesceMs=1_500)
    api = API(server.port, keys.secrets["writer"], workspace)
    doc = api.ok("POST", "/documents", {"title": "Busy", "text": ""}, status=201)["document"]["id"]
    for revision in range(5):
        api.ok("POST", f"/documents/{doc}/operations",
               {"revision": revision, "operation": [revision, "x"] if revision else ["x"]})
    receiver.wait(lambda r: any(e["type"] == "document.changed" for e in distinct(r).values()))
    time.sleep(2.0)
    changed = [e for e in distinct(receiver.received()).values() if e["type"] == "document.changed"]
    assert len(changed) == 1 and changed[0]["data"]["revisions"] == {"from": 1, "to": 5}
    assert changed[0]["data"]["revision"] == 5 and changed[0]["data"]["length"] == 5


def test_a_failing_receiver_gets_every_event_again_with_the_same_id_in_order(server, api, receiver, workspace):
    receiver.plan("/hooks", [{"status": 500}, {"status": 503}, {"status": 500}], {"status": 200})
    doc = api.ok("POST", "/documents", {"title": "Retried", "text": ""}, status=201)["document"]["id"]
    for revision in range(4):
        api.ok("POST", f"/documents/{doc}/operations", {"revision": revision, "operation": [revision, "y"] if revision else ["y"]})
    got = receiver.wait(lambda r: len(distinct(r)) >= 5 and sum(1 for x in r if x["event"]["type"] == "document.changed") >= 4)
    ids = [r["id"] for r in got]
    assert len(ids) > len(set(ids))  # retries happened, with ids seen before
    events = list(distinct(got).values())
    assert len(events) == 5
    # In order per document: the first delivery of each id follows the changes' order.
    first_seen = list(dict.fromkeys(ids))
    revisions = [distinct(got)[i]["data"].get("revisions", {}).get("to", 0) for i in first_seen]
    assert revisions == sorted(revisions) == [0, 1, 2, 3, 4]


def test_kill_9_mid_delivery_loses_no_event_of_a_real_change(servers, keys, receiver, workspace):
    server = servers(receiver, webhookLeaseMs=3_500, webhookTimeoutMs=3_000)
    # The receiver holds the first deliveries long enough for the server to die under them.
    receiver.plan("/hooks", [{"status": 200, "delay_ms": 2_500}], {"status": 200})
    api = API(server.port, keys.secrets["writer"], workspace)
    docs = [api.ok("POST", "/documents", {"title": f"D{i}", "text": ""}, status=201)["document"]["id"] for i in range(3)]
    window = Client(server.ws, "alice", workspace)
    window.request("openDocument", document=docs[0])
    window.request("edit", document=docs[0], revision=0, operation=["w"], opId="k:1")
    for doc in docs:
        api.ok("POST", f"/documents/{doc}/operations", {"revision": 1 if doc == docs[0] else 0,
                                                        "operation": [1, "a"] if doc == docs[0] else ["a"]})
    receiver.wait(lambda r: len(r) >= 1)  # a delivery is under way
    server.kill()
    window.close()
    server.start()
    expected = 3 + 1 + 3  # created x3, the window's change, the API's changes
    got = documents_only(receiver.wait(lambda r: len(distinct(documents_only(r))) >= expected, timeout=30))
    events = distinct(got)
    assert len(events) == expected
    per_doc = collections.defaultdict(list)
    for r in got:
        per_doc[r["event"]["data"]["document"]].append(r["event"]["type"])
    for doc in docs:
        assert per_doc[doc][0] == "document.created"


def test_preferences_sessions_and_a_spawned_window_make_their_events(server, api, receiver, workspace):
    alice = Client(server.ws, "alice", workspace)
    session = alice.connected["session"]["persistentIdentifier"]
    created = receiver.wait(lambda r: any(x["event"]["type"] == "session.created" for x in r))
    assert [x["event"]["data"]["session"] for x in created if x["event"]["type"] == "session.created"] == [session]

    alice.request("setPreference", domain="user", keyPath="sidebar", value=True)
    api.ok("PUT", "/preferences/theme", {"value": "dark"})
    api.ok("DELETE", "/preferences/sidebar", query={"user": "alice"})
    changes = receiver.wait(lambda r: sum(x["event"]["type"] == "preference.changed" for x in r) >= 3)
    preference = [x["event"]["data"] for x in changes if x["event"]["type"] == "preference.changed"]
    # In order within a domain; two domains' events go side by side.
    user = [(p["keyPath"], p["value"], p["removed"], p["actor"]["user"]) for p in preference if p["domain"] == "user"]
    assert user == [("sidebar", True, False, "alice"), ("sidebar", None, True, "api:writer")]
    shared = [(p["keyPath"], p["value"], p["actor"]["user"]) for p in preference if p["domain"] == "workspace"]
    assert shared == [("theme", "dark", "api:writer")]

    drag = alice.request("beginDrag", items=[{"activity": {"activityType": "panes.document", "title": "Spawned",
                                                           "targetContentIdentifier": "doc_x"}}])["drag"]
    spawned = alice.request("drop", drag=drag, target="newWindow", operation="copy")["windows"][0]["session"]
    got = receiver.wait(lambda r: any(x["event"]["type"] == "window.spawned" for x in r))
    window = [x["event"]["data"] for x in got if x["event"]["type"] == "window.spawned"]
    assert window[0]["session"] == spawned and window[0]["drag"] == drag

    api.ok("DELETE", f"/users/alice/sessions/{spawned}")
    got = receiver.wait(lambda r: any(x["event"]["type"] == "session.destroyed" for x in r))
    destroyed = [x["event"]["data"]["session"] for x in got if x["event"]["type"] == "session.destroyed"]
    assert destroyed == [spawned]
    time.sleep(0.5)
    got = receiver.received()
    assert len(got) == len(distinct(got))  # each once
    assert sorted(x["event"]["type"] for x in got).count("session.created") == 2  # alice's, the spawned window's
    alice.close()
