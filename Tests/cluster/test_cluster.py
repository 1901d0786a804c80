"""What must hold across nodes (issue 11), over real sockets: node to node, and through
haproxy. Every test would fail if the nodes did not share and follow one store."""

from __future__ import annotations

import random
import time

from panes_cluster import LEASE_MS, Client, Cluster, Node


def test_a_preference_set_on_one_node_reaches_observers_on_every_node_in_the_same_order(cluster, workspace):
    a, b = cluster.nodes
    observers = [Client(a.url, "ada", workspace), Client(b.url, "ada", workspace)]
    for observer in observers:
        observer.request("observe", domain="user", keyPath="editor", options=["new"])
    writers = [Client(a.url, "ada", workspace), Client(b.url, "ada", workspace)]
    for step in range(10):
        writers[step % 2].request("setPreference", domain="user", keyPath="editor.fontSize", value=10 + step)
    seen = []
    for observer in observers:
        changes = [observer.event("preferenceChanged") for _ in range(10)]
        seen.append([(change["version"], change["new"]) for change in changes])
        observer.drain(0.2)
        assert not [e for e in observer.events if e["type"] == "preferenceChanged"], "each change once"
    assert seen[0] == seen[1]
    assert [value for _, value in seen[0]] == list(range(10, 20))
    assert [version for version, _ in seen[0]] == sorted(version for version, _ in seen[0])


def test_compare_and_set_is_exact_across_nodes(cluster, workspace):
    a, b = cluster.nodes
    on_a, on_b = Client(a.url, "ada", workspace), Client(b.url, "ada", workspace)
    first = on_a.request("setPreference", domain="user", keyPath="count", value=0)
    base = first["version"]
    for round in range(20):
        # Both write on the same version; exactly one may win.
        ids = [on_a.send("setPreference", domain="user", keyPath="count", value=round + 1, ifVersion=base),
               on_b.send("setPreference", domain="user", keyPath="count", value=-round - 1, ifVersion=base)]
        replies = [on_a.reply(ids[0]), on_b.reply(ids[1])]
        won = [r for r in replies if r["ok"]]
        lost = [r for r in replies if not r["ok"]]
        assert len(won) == 1, replies
        assert lost[0]["error"]["code"] == "version_conflict"
        base = won[0]["result"]["version"]


def test_documents_edited_through_both_nodes_converge_with_every_acknowledged_op_once(cluster, workspace):
    creator = Client(cluster.nodes[0].url, "ada", workspace)
    document = creator.request("createDocument", title="Minutes", text="")["document"]["id"]
    rng = random.Random(11)
    editors = []
    for i in range(6):
        client = Client(cluster.nodes[i % 2].url, f"user{i}", workspace)
        opened = client.request("openDocument", document=document)
        editors.append({"client": client, "revision": opened["revision"], "length": len(opened["text"]),
                        "tokens": [], "pending": None})

    def absorb(editor, message):
        if message.get("type") == "documentOperation" and message["document"] == document:
            assert message["revision"] == editor["revision"] + 1, "operations arrive in order, none missing"
            editor["revision"] = message["revision"]
            editor["length"] += sum(len(part) for part in message["operation"] if isinstance(part, str))

    for round in range(40):
        for index, editor in enumerate(editors):
            client = editor["client"]
            for message in client.events:
                absorb(editor, message)
            client.events.clear()
            # Tokens of one length, inserted only between tokens, so none is ever split and
            # each can be counted in the final text.
            token = f"[{index}.{round:03d}]"
            at = rng.randint(0, editor["length"] // len(token)) * len(token)
            operation = [part for part in (at, token, editor["length"] - at) if part != 0]
            request = client.send("edit", document=document, revision=editor["revision"], operation=operation,
                                  opId=f"{index}-{round}")
            editor["pending"] = (request, token)
        for editor in editors:
            client = editor["client"]
            request, token = editor["pending"]
            while True:
                message = client._next(15)
                if message.get("type") == "reply" and message.get("re") == request:
                    assert message["ok"], message
                    editor["revision"] = message["result"]["revision"]
                    editor["length"] += len(token)
                    editor["tokens"].append(token)
                    break
                absorb(editor, message)

    # Every node holds the same text; every acknowledged token is in it exactly once.
    texts = [Client(node.url, "reader", workspace).request("openDocument", document=document)
             for node in cluster.nodes]
    assert texts[0]["revision"] == texts[1]["revision"] == 240
    assert texts[0]["text"] == texts[1]["text"]
    for editor in editors:
        for token in editor["tokens"]:
            assert texts[0]["text"].count(token) == 1, token

    # A resend after a lost acknowledgement is recognised as a duplicate, on the other node too.
    resent = Client(cluster.nodes[1].url, "user0", workspace)
    resent.request("openDocument", document=document)
    again = resent.request("edit", document=document, revision=0, operation=["[0.000]"], opId="0-0")
    assert again.get("duplicate") is True


def test_a_reload_on_another_node_resumes_and_a_duplicate_forks(cluster, workspace):
    a, b = cluster.nodes
    tab = Client(a.url, "ada", workspace)
    # A duplicated tab on b while the original is alive: a fork, as soon as a's window answers.
    started = time.monotonic()
    duplicate = Client(b.url, "ada", workspace, session=tab.credentials)
    assert duplicate.connected["forkedFrom"] == tab.credentials["id"]
    assert time.monotonic() - started < LEASE_MS / 1000, "forked on the pong, not after the lease"
    # A reload: the old socket closes, the new one reaches b and resumes.
    credentials = tab.credentials
    tab.close()
    reload = Client(b.url, "ada", workspace, session=credentials)
    assert reload.connected["created"] is False
    assert reload.connected["session"]["persistentIdentifier"] == credentials["id"]


def test_the_switcher_lists_every_node_and_discard_reaches_the_window(cluster, workspace):
    a, b = cluster.nodes
    window = Client(a.url, "ada", workspace)
    switcher = Client(b.url, "ada", workspace)
    listed = switcher.request("listSessions", watch=True)
    ids = [s["persistentIdentifier"] for s in listed["sessions"]]
    if window.credentials["id"] not in ids:
        # b may answer before it has read a's write: the switcher then hears of it.
        switcher.event("sessionsChanged", lambda e: any(s["persistentIdentifier"] == window.credentials["id"]
                                                        for s in e["sessions"]))
    switcher.request("requestDestruction", session=window.credentials["id"])
    assert window.event("sessionDestroyed")
    assert window.wait_closed() == 4001


def test_open_in_new_window_and_bring_forward_across_nodes(cluster, workspace):
    a, b = cluster.nodes
    tab = Client(a.url, "ada", workspace)
    activity = {"activityType": "panes.document", "title": "Budget", "targetContentIdentifier": "doc_budget"}
    opened = tab.request("requestActivation", activity=activity)
    assert opened["action"] == "open"
    window = Client(b.url, "ada", workspace, ticket=opened["ticket"])
    assert window.connected["connectionOptions"]["userActivities"][0]["title"] == "Budget"
    window.request("updateActivity", activity=activity)
    # From a, "open" the same content again: b's window is brought forward. a learns that b
    # holds the window within milliseconds (a person takes longer to click); until then it
    # answers with a ticket for the same session.
    deadline = time.monotonic() + 10
    while (again := tab.request("requestActivation", activity=activity))["action"] != "activated":
        assert time.monotonic() < deadline, "a never learned that b holds the window:\n" + "".join(a.log[-30:])
        time.sleep(0.05)
    assert again["action"] == "activated"
    assert window.event("activate")["activity"]["targetContentIdentifier"] == "doc_budget"


def test_presence_crosses_nodes(cluster, workspace):
    a, b = cluster.nodes
    ada = Client(a.url, "ada", workspace)
    document = ada.request("createDocument", title="Plan", text="hello world")["document"]["id"]
    bob = Client(b.url, "bob", workspace)
    ada.request("openDocument", document=document)
    bob.request("openDocument", document=document)
    ada.request("setPresence", document=document, selection={"anchor": 0, "head": 5})
    seen = bob.event("presence", lambda e: e["user"] == "ada")
    assert seen["selection"] == {"anchor": 0, "head": 5}


def test_a_node_that_starts_later_shows_the_cursors_shared_before_it_started(pg, workspace):
    # b asks every node at start (scenesWanted, through PostgreSQL's NOTIFY); a answers with its
    # scenes' presence to b alone. Before, b showed ada's cursor only once she moved it again.
    cluster = Cluster(pg, nodes=1, haproxy=False)
    try:
        (a,) = cluster.nodes
        ada = Client(a.url, "ada", workspace)
        document = ada.request("createDocument", title="Plan", text="hello world")["document"]["id"]
        ada.request("openDocument", document=document)
        ada.request("setPresence", document=document, selection={"anchor": 0, "head": 5})
        b = Node(cluster.store, cluster.public_url, cluster.config, 1).start()
        cluster.nodes.append(b)
        bob = Client(b.url, "bob", workspace)
        opened = bob.request("openDocument", document=document)["presence"]
        # a's answer may reach b just after bob's open: then bob hears it as an event.
        seen = next((p for p in opened if p["user"] == "ada"), None) \
            or bob.event("presence", lambda e: e["user"] == "ada", timeout=10)
        assert seen["selection"] == {"anchor": 0, "head": 5}
        assert seen["left"] is False
    finally:
        cluster.close()


def test_through_haproxy_two_tabs_on_two_nodes_behave_like_two_tabs_on_one(cluster, workspace):
    # Round robin: consecutive connections reach different nodes.
    first = Client(cluster.url, "ada", workspace)
    second = Client(cluster.url, "ada", workspace)
    first.request("observe", domain="user", keyPath="theme", options=["new"])
    second.request("setPreference", domain="user", keyPath="theme", value="dark")
    assert first.event("preferenceChanged")["new"] == "dark"
    listed = second.request("listSessions")
    ids = {s["persistentIdentifier"] for s in listed["sessions"]}
    assert {first.credentials["id"], second.credentials["id"]} <= ids


def test_drag_from_a_window_on_one_node_onto_windows_and_the_new_window_zone_through_another(cluster, workspace):
    a, b = cluster.nodes
    source = Client(a.url, "ada", workspace)
    target = Client(b.url, "ada", workspace)
    item = {"activity": {"activityType": "panes.document", "title": "Notes", "targetContentIdentifier": "doc_notes"},
            "operations": ["copy", "move"]}
    drag = source.request("beginDrag", items=[item])["drag"]

    def drop(**fields):
        # b may not have heard of the drag yet (a few milliseconds): a person's drop takes longer.
        deadline = time.monotonic() + 5
        while True:
            reply = target.reply(target.send("drop", drag=drag, **fields))
            if reply["ok"] or reply["error"]["code"] != "drag_not_found" or time.monotonic() > deadline:
                return reply
            time.sleep(0.02)

    dropped = drop(target="scene", operation="move")
    assert dropped["ok"], dropped
    assert dropped["result"]["items"][0]["title"] == "Notes"
    ended = source.event("dragEnded")
    assert ended["outcome"] == "dropped" and ended["operation"] == "move"

    # A second drag, onto the new-window zone through b; the new window may reach either node.
    drag = source.request("beginDrag", items=[item])["drag"]
    opened = drop(target="newWindow")
    assert opened["ok"], opened
    ticket = opened["result"]["windows"][0]["ticket"]
    window = Client(cluster.url, "ada", workspace, ticket=ticket)
    assert window.connected["connectionOptions"]["userActivities"][0]["title"] == "Notes"
    assert source.event("dragEnded")["target"]["kind"] == "newWindow"

    # A third, dropped by the source's own window onto the window on b that its switcher lists:
    # a delivers it through b. (a may not have heard of b's window yet: a person takes longer.)
    drag = source.request("beginDrag", items=[item])["drag"]
    deadline = time.monotonic() + 5
    while True:
        reply = source.reply(source.send("drop", drag=drag, target="scene", scene=target.connected["scene"],
                                         operation="copy"))
        if reply["ok"] or reply["error"]["code"] != "scene_not_found" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert reply["ok"], reply
    assert reply["result"]["delivered"] == target.connected["scene"]
    received = target.event("itemsDropped")
    assert received["items"][0]["title"] == "Notes" and received["operation"] == "copy"
    assert source.event("dragEnded")["target"]["session"] == target.credentials["id"]


def test_a_document_made_on_one_node_opens_at_once_on_the_other(cluster, workspace):
    a, b = cluster.nodes
    maker = Client(a.url, "ada", workspace)
    reader = Client(b.url, "bob", workspace)
    for round in range(10):
        document = maker.request("createDocument", title=f"Quick {round}", text="hello")["document"]["id"]
        # b has not necessarily read a's write yet: the open waits for it rather than failing.
        opened = reader.request("openDocument", document=document)
        assert opened["text"] == "hello"


def entry(listing: dict, session: str) -> dict | None:
    return next((s for s in listing["sessions"] if s["persistentIdentifier"] == session), None)


def test_a_window_live_on_another_node_shows_live_in_the_switcher_and_follows_its_state(cluster, workspace):
    a, b = cluster.nodes
    window = Client(a.url, "ada", workspace)
    window.request("lifecycle", visible=True, focused=True)
    session = window.credentials["id"]
    switcher = Client(b.url, "ada", workspace)
    listed = switcher.request("listSessions", watch=True)

    def shows(state: str, listing: dict | None = None) -> dict:
        # b hears of a's scenes a notification later than a's own switchers would.
        if listing and (found := entry(listing, session)) and found["state"] == state:
            return listing
        return switcher.event("sessionsChanged", lambda e: (entry(e, session) or {}).get("state") == state)

    live = entry(shows("foregroundActive", listed), session)
    assert live["scene"] == window.connected["scene"]
    assert live["traits"] == {"width": "regular", "pointer": "fine"}
    window.request("lifecycle", visible=False, focused=False)
    assert shows("background")["appState"] == "background"
    window.close()
    gone = entry(shows("disconnected"), session)
    assert "scene" not in gone and "traits" not in gone


def test_a_node_that_joins_a_lone_node_hears_its_windows_and_people_and_then_their_changes(pg, workspace):
    """A node alone writes no lists of its live windows or people (no other node's lease runs to
    read them): a node that joins later asks for them once registered and is told, and hears
    every change after that."""
    cluster = Cluster(pg, nodes=1, haproxy=False)
    try:
        (a,) = cluster.nodes
        window = Client(a.url, "ada", workspace)
        window.request("lifecycle", visible=True, focused=True)
        session = window.credentials["id"]
        document = window.request("createDocument", title="Plan", text="x")["document"]["id"]
        window.request("openDocument", document=document)
        window.drain(0.3)  # past sceneShareIntervalMs: a's lists are made, for nobody

        b = Node(cluster.store, cluster.public_url, cluster.config, 1).start()
        cluster.nodes.append(b)
        switcher = Client(b.url, "ada", workspace)
        watcher = Client(b.url, "bob", workspace)
        listed = watcher.request("observeDocuments")["documents"]

        def people(active: int, listing: list | None = None) -> dict:
            want = [{"user": "ada", "name": "ada", "windows": 1, "active": active}]
            found = next((d for d in listing or [] if d["id"] == document), None)
            if found and found.get("people") == want:
                return found
            return watcher.event("documentsChanged", lambda e: e["document"]["id"] == document
                                 and e["document"].get("people") == want)["document"]

        def shows(state: str, listing: dict | None = None) -> dict:
            if listing and (found := entry(listing, session)) and found.get("state") == state and "scene" in found:
                return found
            return entry(switcher.event("sessionsChanged", lambda e: (entry(e, session) or {}).get("state") == state
                                        and "scene" in (entry(e, session) or {})), session)

        live = shows("foregroundActive", switcher.request("listSessions", watch=True))
        assert live["scene"] == window.connected["scene"]
        assert people(1, listed)["participantCount"] == 1
        # b's lease runs now: a's changes reach it.
        window.request("lifecycle", visible=False, focused=False)
        assert shows("background")["scene"] == window.connected["scene"]
        assert people(0)["participantCount"] == 1
    finally:
        cluster.close()


def test_a_node_alone_again_after_another_died_tells_a_third_that_joins_its_windows_and_people(pg, workspace):
    """Three nodes in turn: a and b run, b is killed, and a, alone once b's lease ended, builds
    no lists; the changes it made meanwhile reach c, which joins after, as they are then, and
    every change after that does too. Neither b's window nor b counts any more."""
    cluster = Cluster(pg, nodes=2, haproxy=False)
    try:
        a, b = cluster.nodes
        window = Client(a.url, "ada", workspace)
        window.request("lifecycle", visible=True, focused=False)
        session = window.credentials["id"]
        document = window.request("createDocument", title="Plan", text="x")["document"]["id"]
        window.request("openDocument", document=document)
        there = Client(b.url, "ada", workspace)
        elsewhere = there.credentials["id"]
        mine = Client(a.url, "ada", workspace)
        listing = mine.request("listSessions", watch=True)
        if "scene" not in (entry(listing, elsewhere) or {}):
            mine.event("sessionsChanged", lambda e: "scene" in (entry(e, elsewhere) or {}))
        b.kill()
        # a found b gone: b's window leaves a's switcher.
        mine.event("sessionsChanged", lambda e: (entry(e, elsewhere) or {}).get("state") == "disconnected")
        window.request("lifecycle", visible=True, focused=True)
        window.request("updateTraits", traits={"width": "compact"})
        window.drain(0.3)  # past sceneShareIntervalMs

        c = Node(cluster.store, cluster.public_url, cluster.config, 2).start()
        cluster.nodes.append(c)
        switcher = Client(c.url, "ada", workspace)
        watcher = Client(c.url, "bob", workspace)
        listed = watcher.request("observeDocuments")["documents"]

        def people(active: int, listing: list | None = None) -> dict:
            want = [{"user": "ada", "name": "ada", "windows": 1, "active": active}]
            found = next((d for d in listing or [] if d["id"] == document), None)
            if found and found.get("people") == want:
                return found
            return watcher.event("documentsChanged", lambda e: e["document"]["id"] == document
                                 and e["document"].get("people") == want)["document"]

        def shows(state: str, width: str, listing: dict | None = None) -> dict:
            def fits(found: dict | None) -> bool:
                return bool(found) and found.get("state") == state and "scene" in found \
                    and found.get("traits", {}).get("width") == width
            if listing and fits(found := entry(listing, session)):
                return found
            return entry(switcher.event("sessionsChanged", lambda e: fits(entry(e, session))), session)

        live = shows("foregroundActive", "compact", switcher.request("listSessions", watch=True))
        assert live["scene"] == window.connected["scene"]
        assert "scene" not in (entry(switcher.request("listSessions", watch=True), elsewhere) or {}), \
            "b's window went with b"
        assert people(1, listed)["participantCount"] == 1
        window.request("lifecycle", visible=False, focused=False)
        assert shows("background", "compact")["scene"] == window.connected["scene"]
        assert people(0)["participantCount"] == 1
    finally:
        cluster.close()


def test_two_drops_of_one_drag_through_two_nodes_at_once_deliver_it_once(cluster, workspace):
    a, b = cluster.nodes
    source = Client(a.url, "ada", workspace)
    droppers = [Client(a.url, "ada", workspace), Client(b.url, "ada", workspace)]
    item = {"activity": {"activityType": "panes.document", "title": "Notes", "targetContentIdentifier": "doc_notes"},
            "operations": ["copy"]}
    for round in range(10):
        drag = source.request("beginDrag", items=[item])["drag"]
        # b hears of the drag a moment later (a person's drop takes longer): a drop with an
        # operation the item refuses tells whether it has, without ending the drag.
        deadline = time.monotonic() + 5
        while (probe := droppers[1].reply(droppers[1].send("drop", drag=drag, target="scene", operation="move"))
               )["error"]["code"] == "drag_not_found":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert probe["error"]["code"] == "operation_not_allowed"
        # Both drops leave before either node can hear of the other.
        sent = [dropper.send("drop", drag=drag, target="scene") for dropper in droppers]
        replies = [dropper.reply(request) for dropper, request in zip(droppers, sent)]
        won = [reply for reply in replies if reply["ok"]]
        lost = [reply for reply in replies if not reply["ok"]]
        assert len(won) == 1, f"round {round}: {replies}"
        assert lost[0]["error"]["code"] == "drag_already_dropped", replies
        assert source.event("dragEnded", lambda e: e["drag"] == drag)["outcome"] == "dropped"
    source.drain(0.3)
    assert not [e for e in source.events if e["type"] == "dragEnded"], "each drag ended once"


def test_a_refresh_of_a_session_live_nowhere_survives_the_older_copy_of_the_node_that_held_it(cluster, workspace):
    a, b = cluster.nodes
    # Not a workspace document (a window showing a missing one forgets it when it connects).
    activity = {"activityType": "com.example.note", "title": "Budget", "targetContentIdentifier": "note_budget"}
    for round in range(8):
        tab = Client(a.url, "ada", workspace)
        credentials = tab.credentials
        tab.close()
        other = Client(b.url, "ada", workspace)
        # Until b has read that a let go, b would hand the refresh to a: wait for that first.
        deadline = time.monotonic() + 10
        while (entry(other.request("listSessions"), credentials["id"]) or {}).get("state") != "disconnected":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        # The refresh through b, then at once the window coming back on a, which may resume it
        # from its own, older copy before it has read b's write.
        title = f"Budget {round}"
        other.request("requestRefresh", session=credentials["id"], title=title, activity=activity)
        window = Client(a.url, "ada", workspace, session=credentials)
        if window.connected["session"]["title"] != title:
            assert window.event("sessionRefreshed")["title"] == title
        # Every node, and the store, end with the refresh.
        deadline = time.monotonic() + 10
        for client in (window, other):
            while (entry(client.request("listSessions"), credentials["id"]) or {}).get("title") != title:
                assert time.monotonic() < deadline, "the older copy undid the refresh"
                time.sleep(0.05)
        window.close()
        other.close()


def test_versions_are_shared_any_node_reads_and_restores_and_they_go_with_their_document(cluster, workspace):
    """Issue 25 §4: a version saved through one node is listed, read, compared and restored
    through the other (which reads the shared store, not its memory); the restore reaches the
    saver's window as an ordinary operation; deleting the document takes its versions."""
    a, b = cluster.nodes
    ada = Client(a.url, "ada", workspace)
    bob = Client(b.url, "bob", workspace)
    document = ada.request("createDocument", title="Shared history", text="one two three")["document"]["id"]
    ada.request("openDocument", document=document)
    saved = ada.request("saveVersion", document=document, name="before")["version"]
    ada.request("edit", document=document, revision=0, operation=[4, -3, "2", 6], opId="ada:1")

    listed = bob.request("listVersions", document=document)["versions"]
    assert [v["id"] for v in listed] == [saved["id"]]
    assert bob.request("readVersion", document=document, version=saved["id"])["text"] == "one two three"

    opened = bob.request("openDocument", document=document)
    assert opened["text"] == "one 2 three"
    restored = bob.request("restoreVersion", document=document, version=saved["id"])
    assert restored["revision"] == 2
    event = ada.event("documentOperation", where=lambda e: e.get("revision") == 2)
    assert event["author"]["user"] == "bob"
    assert ada.request("openDocument", document=document, revision=2)["catchUp"] == "none"
    fresh = Client(a.url, "carl", workspace)
    assert fresh.request("openDocument", document=document)["text"] == "one two three"
    # The node that restored checkpointed what was there first: ada's node lists it too.
    kinds = [v["kind"] for v in ada.request("listVersions", document=document)["versions"]]
    assert kinds == ["checkpoint", "named"]

    bob.request("deleteDocument", document=document)
    # Ada's node may not have heard of the deletion yet (its list still has the document): it
    # reads the store, where the versions went with the document.
    reply = ada.reply(ada.send("listVersions", document=document))
    if reply.get("ok"):
        assert reply["result"]["versions"] == []
    else:
        assert reply["error"]["code"] == "document_not_found"
    assert bob.reply(bob.send("readVersion", document=document, version=saved["id"]))["error"]["code"] == "document_not_found"
