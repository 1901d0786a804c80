"""The HTTP API end to end over real sockets against the real server (SQLite): documents,
preferences and sessions; writes heard by windows; keys, scopes, revocation without a
restart and rate limits; `Idempotency-Key`. Every answer is checked against openapi.json."""

from __future__ import annotations


from api_support import API, SPEC, Server
from panes_cluster import Client


def window(server: Server, workspace: str, name: str = "alice") -> Client:
    return Client(server.ws, name, workspace)


def test_documents_made_read_edited_renamed_and_deleted_through_the_api_reach_windows(server, api, workspace):
    watcher = window(server, workspace)
    watcher.request("observeDocuments")
    made = api.ok("POST", "/documents", {"title": "Plan", "text": "hello"}, status=201)["document"]
    assert made["createdBy"] == "api:writer" and made["revision"] == 0
    assert watcher.event("documentsChanged", lambda e: e["change"] == "created")["document"]["id"] == made["id"]
    doc = made["id"]

    opened = watcher.request("openDocument", document=doc)
    assert opened["text"] == "hello"
    applied = api.ok("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": [5, " world"]})
    assert applied["revision"] == 1
    heard = watcher.event("documentOperation", lambda e: e["document"] == doc)
    assert heard["revision"] == 1 and heard["author"]["user"] == "api:writer" and heard["author"]["name"] == "CRM sync"

    # A window's edit, made on what it has, is read back through the API; an API edit made on
    # an older revision is transformed past it, as any window's.
    watcher.request("edit", document=doc, revision=1, operation=[11, "!"], opId="w:1")
    read = api.ok("GET", f"/documents/{doc}")
    assert (read["revision"], read["text"]) == (2, "hello world!")
    api.ok("POST", f"/documents/{doc}/operations", {"revision": 1, "operation": [">> ", 11]})
    assert api.ok("GET", f"/documents/{doc}")["text"] == ">> hello world!"
    assert watcher.event("documentOperation", lambda e: e["revision"] == 3)["operation"] == [">> ", 12]
    assert api.ok("GET", f"/documents/{doc}", query={"revision": 1})["text"] == "hello world"
    assert api.ok("GET", f"/documents/{doc}", query={"revision": 0})["text"] == "hello"
    future = api.call("GET", f"/documents/{doc}", query={"revision": 9})
    assert future.status == 409 and future.error["code"] == "revision_in_future"

    assert api.ok("PATCH", f"/documents/{doc}", {"title": "Plan B"})["document"]["title"] == "Plan B"
    assert watcher.event("documentsChanged", lambda e: e["change"] == "renamed")["document"]["title"] == "Plan B"
    listed = api.ok("GET", "/documents")["documents"]
    assert [d["title"] for d in listed] == ["Plan B"]

    assert api.ok("DELETE", f"/documents/{doc}") == {"document": doc}
    assert watcher.event("documentDeleted", lambda e: e["document"] == doc)["by"]["user"] == "api:writer"
    gone = api.call("GET", f"/documents/{doc}")
    assert gone.status == 404 and gone.error["code"] == "document_not_found"
    watcher.close()


def test_a_document_nobody_has_open_is_edited_and_read_and_survives_a_restart(server, api, workspace):
    doc = api.ok("POST", "/documents", {"title": "Notes", "text": "a"}, status=201)["document"]["id"]
    for revision in range(3):
        api.ok("POST", f"/documents/{doc}/operations", {"revision": revision, "operation": [1 + revision, "b"]})
    assert api.ok("GET", f"/documents/{doc}")["text"] == "abbb"
    server.kill()  # SIGKILL: what was answered is durable
    server.start()
    api = API(server.port, api.secret, workspace)
    assert api.ok("GET", f"/documents/{doc}")["text"] == "abbb"
    assert api.ok("GET", f"/documents/{doc}", query={"revision": 1})["text"] == "ab"


def test_a_revision_older_than_the_store_keeps_is_a_clear_error(servers, keys, receiver, workspace):
    server = servers(None, snapshotEvery=2)
    api = API(server.port, keys.secrets["writer"], workspace)
    doc = api.ok("POST", "/documents", {"title": "Log", "text": ""}, status=201)["document"]["id"]
    for revision in range(4):
        operation = [revision, "x"] if revision else ["x"]
        api.ok("POST", f"/documents/{doc}/operations", {"revision": revision, "operation": operation})
    old = api.call("GET", f"/documents/{doc}", query={"revision": 1})
    assert old.status == 410 and old.error["code"] == "revision_unavailable" and old.error["field"] == "revision"
    assert api.ok("GET", f"/documents/{doc}", query={"revision": 4})["text"] == "xxxx"


def test_attempts_around_the_keys_are_refused_with_nothing_changed(server, api, keys, workspace):
    doc = api.ok("POST", "/documents", {"title": "Kept", "text": "same"}, status=201)["document"]["id"]
    edit = {"revision": 0, "operation": [4, "!"]}

    nobody = api.as_key(None).call("POST", f"/documents/{doc}/operations", edit)
    assert nobody.status == 401 and nobody.error["code"] == "unauthenticated"
    assert nobody.headers.get("www-authenticate", "").startswith("Bearer")
    forged = api.as_key("pk_" + "0" * 64).call("DELETE", f"/documents/{doc}")
    assert forged.status == 401 and forged.error["code"] == "unauthenticated"
    malformed = api.call("GET", "/documents", headers={"Authorization": "Basic eDp5"})
    assert malformed.status == 401

    reader = api.as_key(keys.secrets["reader"])
    assert reader.ok("GET", f"/documents/{doc}")["text"] == "same"
    for method, path, body in [("POST", f"/documents/{doc}/operations", edit), ("PATCH", f"/documents/{doc}", {"title": "x"}),
                               ("DELETE", f"/documents/{doc}", None), ("POST", "/documents", {"title": "y"}),
                               ("PUT", "/preferences/theme", {"value": "dark"})]:
        refused = reader.call(method, path, body)
        assert refused.status == 403 and refused.error["code"] == "forbidden", (method, path, refused)

    stranger = api.as_key(keys.secrets["stranger"])
    for method, path, body in [("GET", f"/documents/{doc}", None), ("POST", f"/documents/{doc}/operations", edit),
                               ("DELETE", f"/documents/{doc}", None)]:
        refused = stranger.call(method, path, body)
        assert refused.status == 403 and refused.error["code"] == "forbidden"
    # In its own workspace the document does not exist: ids of other workspaces reveal nothing.
    assert stranger.in_workspace("elsewhere").call("GET", f"/documents/{doc}").status == 404
    assert stranger.in_workspace("elsewhere").call("DELETE", f"/documents/{doc}").status == 404

    # Revoked without a restart: the entry goes from the file, SIGHUP.
    keys.remove("writer")
    server.reload()
    revoked = api.call("POST", f"/documents/{doc}/operations", edit)
    assert revoked.status == 401 and revoked.error["code"] == "unauthenticated"
    # Rotated: a new key works at once.
    fresh = api.as_key(keys.add("writer2", [workspace], "write"))
    server.reload()
    assert fresh.ok("GET", f"/documents/{doc}")["text"] == "same"
    assert [d["title"] for d in fresh.ok("GET", "/documents")["documents"]] == ["Kept"]
    assert fresh.ok("GET", f"/documents/{doc}")["revision"] == 0


def test_a_retried_write_with_the_same_idempotency_key_is_applied_once(server, api, workspace):
    first = api.ok("POST", "/documents", {"title": "Once", "text": ""}, status=201, key="create-1")
    again = api.ok("POST", "/documents", {"title": "Once", "text": ""}, status=201, key="create-1")
    assert first["document"]["id"] == again["document"]["id"]
    assert len(api.ok("GET", "/documents")["documents"]) == 1
    reused = api.call("POST", "/documents", {"title": "Other"}, key="create-1")
    assert reused.status == 422 and reused.error["code"] == "idempotency_key_reused"

    doc = first["document"]["id"]
    one = api.ok("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": ["x"]}, key="edit-1")
    two = api.ok("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": ["x"]}, key="edit-1")
    assert one["revision"] == two["revision"] == 1 and two.get("duplicate") is True
    assert api.ok("GET", f"/documents/{doc}")["text"] == "x"


def test_bad_requests_get_the_protocols_error_objects(server, api):
    cases = [
        (api.call("POST", "/documents", raw=b"{not json"), 400, "malformed_json"),
        (api.call("POST", "/documents", [1, 2]), 400, "invalid_message"),
        (api.call("POST", "/documents", {"title": 5}), 400, "invalid_field"),
        (api.call("POST", "/documents", {"title": "t", "type": "deleteDocument"}), 400, "invalid_field"),
        (api.call("POST", "/documents/doc_x/operations", {"operation": ["a"]}), 400, "missing_field"),
        (api.call("POST", "/documents/doc_x/operations", {"revision": 0, "operation": ["a"]}), 404, "document_not_found"),
        (api.call("GET", "/nothing"), 404, "unknown_type"),
        (api.call("GET", "/documents/doc_x", query={"revision": "x"}), 400, "invalid_field"),
        (api.call("PUT", "/documents"), 404, "unknown_type"),
    ]
    for response, status, code in cases:
        assert (response.status, response.error["code"]) == (status, code), response
    doc = api.ok("POST", "/documents", {"title": "t", "text": "abc"}, status=201)["document"]["id"]
    misfit = api.call("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": [10, "x"]})
    assert misfit.status == 422 and misfit.error["code"] == "invalid_operation"
    assert api.ok("GET", f"/documents/{doc}")["text"] == "abc"


def test_each_key_is_held_to_its_rate(servers, keys, workspace):
    server = servers(None, apiRateLimitPerSecond=1, apiRateLimitBurst=3)
    api = API(server.port, keys.secrets["writer"], workspace)
    answers = [api.call("GET", "/documents") for _ in range(5)]
    assert [a.status for a in answers[:3]] == [200, 200, 200]
    limited = answers[3]
    assert limited.status == 429 and limited.error["code"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1 and "apiRateLimitPerSecond" in limited.error["message"]
    # Another key has its own bucket.
    assert api.as_key(keys.secrets["reader"]).call("GET", "/documents").status == 200


def test_preferences_are_written_with_compare_and_set_and_heard_by_windows(server, api, workspace):
    watcher = window(server, workspace, "bob")
    watcher.request("observe", domain="workspace", keyPath="theme")
    watcher.request("observe", domain="user", keyPath="sidebar")
    first = api.ok("PUT", "/preferences/theme", {"value": "dark"})
    assert first == {"version": 1, "changed": True}
    assert watcher.event("preferenceChanged", lambda e: e["keyPath"] == "theme")["new"] == "dark"
    stale = api.call("PUT", "/preferences/theme", {"value": "light", "ifVersion": 0})
    assert stale.status == 409 and stale.error["code"] == "version_conflict"
    assert api.ok("PUT", "/preferences/theme", {"value": "light", "ifVersion": 1})["version"] == 2
    read = api.ok("GET", "/preferences")
    assert read["domain"] == "workspace" and read["values"]["theme"] == {"value": "light", "version": 2}

    # A user's own domain: the window of that user hears it.
    api.ok("PUT", "/preferences/sidebar", {"value": True}, query={"user": "bob"})
    heard = watcher.event("preferenceChanged", lambda e: e["keyPath"] == "sidebar")
    assert heard["new"] is True and heard["domain"] == "user"
    assert api.ok("GET", "/preferences", query={"user": "bob"})["values"]["sidebar"]["value"] is True
    assert api.ok("DELETE", "/preferences/sidebar", query={"user": "bob"})["changed"] is True
    watcher.close()


def test_sessions_are_listed_refreshed_and_destroyed(server, api, workspace):
    carol = window(server, workspace, "carol")
    session = carol.connected["session"]["persistentIdentifier"]
    listed = api.ok("GET", "/users/carol/sessions")["sessions"]
    assert [s["persistentIdentifier"] for s in listed] == [session]
    refreshed = api.ok("POST", f"/users/carol/sessions/{session}/refresh", {"title": "From the CRM"})
    assert refreshed["session"]["title"] == "From the CRM"
    assert api.call("GET", "/users/dave/sessions").body["sessions"] == []
    assert api.call("DELETE", f"/users/dave/sessions/{session}").status == 404
    destroyed = api.ok("DELETE", f"/users/carol/sessions/{session}", query={"animation": "decline"})
    assert destroyed == {"session": session, "animation": "decline"}
    assert carol.event("sessionDestroyed")["animation"] == "decline"
    assert api.ok("GET", "/users/carol/sessions")["sessions"] == []
    carol.close()


def test_every_answer_was_checked_against_openapi():
    assert SPEC.checked > 50
