"""The HTTP API's second credential, a JWT, over real HTTP against `panes serve --auth jwt`: a
token with the service role (`panes.service`) is the backend like an API key; a user's token
acts as that user, held to the same per-document rights as a window of theirs; a token that is
expired, forged or for another audience is refused with 401 and says why; failed tokens are
limited per address; every token of one subject shares one rate. Every answer is checked
against openapi.json (api_support.API)."""

from __future__ import annotations

import secrets
from typing import Iterator

import pytest

from api_support import API, Keys, Server, Tokens, config
from panes_cluster import Client


@pytest.fixture
def tokens() -> Tokens:
    return Tokens()


@pytest.fixture
def jwt_servers(keys: Keys, tokens: Tokens) -> Iterator:
    """Starts `--auth jwt` servers with the test's API keys, JWT keys and `settings`."""
    made: list[Server] = []

    def start(**settings) -> Server:
        made.append(Server(keys.path, config(None, **settings), args=tokens.args))
        return made[-1]
    yield start
    for server in made:
        server.stop()


def documents(api: API) -> dict[str, dict]:
    return {d["id"]: d for d in api.ok("GET", "/documents")["documents"]}


def test_a_service_token_is_the_backend_like_an_api_key(jwt_servers, tokens: Tokens, keys: Keys, workspace: str):
    server = jwt_servers()
    backend = API(server.port, tokens.service("crm", [workspace], "write", name="CRM"), workspace)
    doc = backend.ok("POST", "/documents", {"title": "Plan", "text": "one"}, status=201)["document"]["id"]
    edited = backend.ok("POST", f"/documents/{doc}/operations", {"revision": 0, "operation": [3, " two"]})
    assert edited["revision"] == 1
    # A window of a user hears the backend's edits, authored by the service.
    alice = Client(server.ws, "", workspace, token=tokens.user("alice", {workspace: "editor"}))
    opened = alice.request("openDocument", document=doc)
    assert opened["text"] == "one two"
    backend.ok("POST", f"/documents/{doc}/operations", {"revision": 1, "operation": [7, "!"]})
    heard = alice.event("documentOperation", lambda e: e["document"] == doc)
    assert heard["author"]["user"] == "service:crm" and heard["author"]["name"] == "CRM"

    # The backend shares, lists shares, makes and revokes links, on any document of its workspace.
    shared = backend.ok("PUT", f"/documents/{doc}/shares/bob", {"role": "viewer"})
    assert [(g["user"], g["role"]) for g in shared["grants"]] == [("bob", "viewer")]
    link = backend.ok("POST", f"/documents/{doc}/links", {"role": "viewer", "expiresInMs": 60_000}, status=201)
    assert link["token"].startswith("pdl_")
    listed = backend.ok("GET", f"/documents/{doc}/shares")
    assert [x["id"] for x in listed["links"]] == [link["link"]["id"]] and "token" not in listed["links"][0]
    revoked = backend.ok("DELETE", f"/documents/{doc}/links/{link['link']['id']}")
    assert revoked["links"][0]["revokedAt"] is not None
    assert backend.ok("DELETE", f"/documents/{doc}/shares/bob")["grants"] == []
    # An API key does the same (the backend's two credentials, one set of rights).
    by_key = API(server.port, keys.secrets["writer"], workspace)
    assert by_key.ok("PUT", f"/documents/{doc}/shares/carol", {"role": "editor"})["grants"][0]["user"] == "carol"

    # A read-only service token reads everything and writes nothing.
    reader = backend.as_key(tokens.service("bi", [workspace], "read"))
    assert set(documents(reader)) == {doc}
    assert reader.ok("GET", f"/documents/{doc}/shares")["grants"][0]["user"] == "carol"
    refused = reader.call("POST", "/documents", {"title": "No"})
    assert refused.status == 403 and refused.error["code"] == "forbidden" and "read-only" in refused.error["message"]
    refused = reader.call("DELETE", f"/documents/{doc}")
    assert refused.status == 403
    # Outside its workspaces: refused; and nothing above changed anything.
    elsewhere = backend.in_workspace("elsewhere").call("GET", "/documents")
    assert elsewhere.status == 403 and elsewhere.error["code"] == "forbidden"
    assert set(documents(backend)) == {doc}
    assert backend.ok("GET", f"/documents/{doc}")["text"] == "one two!"

    # A service token is no window's credential.
    window = Client(server.ws, "", workspace, token=backend.secret, connect=False)
    reply = window.reply(window.send("connect", protocol=1, auth={"token": backend.secret}, workspace=workspace))
    assert not reply["ok"] and reply["error"]["code"] == "unauthenticated" and "HTTP API" in reply["error"]["message"]
    alice.close()


def test_a_users_token_acts_as_that_user_with_the_rights_of_their_windows(jwt_servers, tokens: Tokens, workspace: str):
    server = jwt_servers()
    alice = API(server.port, tokens.user("alice", {workspace: "editor"}, name="Alice"), workspace)
    bob = alice.as_key(tokens.user("bob", {workspace: "editor"}, name="Bob"))
    shared = alice.ok("POST", "/documents", {"title": "Shared", "text": "one"}, status=201)["document"]["id"]
    hidden = alice.ok("POST", "/documents", {"title": "Secret", "text": "s"}, status=201)["document"]["id"]
    # Alice created both: she owns them, and shares as their owner.
    edited = alice.ok("POST", f"/documents/{shared}/operations", {"revision": 0, "operation": [3, " two"]})
    assert edited["revision"] == 1
    alice.ok("PUT", f"/documents/{shared}/shares/bob", {"role": "viewer"})
    alice.ok("PUT", f"/documents/{hidden}/shares/bob", {"role": "none"})

    # Bob, an editor of the workspace, is a viewer of one document and cannot see the other.
    assert set(documents(bob)) == {shared}
    assert documents(alice).keys() == {shared, hidden}
    assert bob.ok("GET", f"/documents/{shared}")["text"] == "one two"
    for method, path, body in [("GET", f"/documents/{hidden}", None),
                               ("POST", f"/documents/{hidden}/operations", {"revision": 0, "operation": [1, "x"]}),
                               ("PATCH", f"/documents/{hidden}", {"title": "Found"}),
                               ("GET", f"/documents/{hidden}/shares", None)]:
        answer = bob.call(method, path, body)
        assert answer.status == 404 and answer.error["code"] == "document_not_found", (method, path, answer)
    for method, path, body in [("POST", f"/documents/{shared}/operations", {"revision": 1, "operation": [7, " three"]}),
                               ("PATCH", f"/documents/{shared}", {"title": "Mine"}),
                               ("DELETE", f"/documents/{shared}", None),
                               ("PUT", f"/documents/{shared}/shares/bob", {"role": "owner"}),
                               ("DELETE", f"/documents/{shared}/shares/bob", None),
                               ("GET", f"/documents/{shared}/shares", None),
                               ("POST", f"/documents/{shared}/links", {"role": "editor"})]:
        answer = bob.call(method, path, body)
        assert answer.status == 403 and answer.error["code"] == "forbidden", (method, path, answer)
    # Only for himself: another user's sessions and preferences are not his to touch.
    for method, path, query in [("GET", "/users/alice/sessions", None), ("GET", "/preferences", {"user": "alice"}),
                                ("PUT", "/preferences/theme", {"user": "alice"})]:
        answer = bob.call(method, path, {"value": "dark"} if method == "PUT" else None, query=query)
        assert answer.status == 403 and answer.error["code"] == "forbidden", (method, path, answer)
    assert bob.ok("GET", "/users/bob/sessions")["sessions"] == []
    # Not a member elsewhere.
    answer = bob.in_workspace("w" + secrets.token_hex(4)).call("GET", "/documents")
    assert answer.status == 403 and answer.error["code"] == "not_a_member"

    # Nothing Bob tried changed anything.
    read = alice.ok("GET", f"/documents/{shared}")
    assert (read["text"], read["revision"], read["document"]["title"]) == ("one two", 1, "Shared")
    assert alice.ok("GET", f"/documents/{hidden}")["text"] == "s"
    assert [(g["user"], g["role"]) for g in alice.ok("GET", f"/documents/{shared}/shares")["grants"]] == [("bob", "viewer")]

    # Bob's window agrees with his token: the same list, the same refusal.
    window = Client(server.ws, "", workspace, token=bob.secret)
    assert [d["id"] for d in window.request("observeDocuments")["documents"]] == [shared]
    assert window.request("openDocument", document=shared)["role"] == "viewer"
    refused = window.reply(window.send("edit", document=shared, revision=1, operation=[7, "?"], opId="bob:1"))
    assert refused["error"]["code"] == "forbidden"
    # Raised to editor by Alice: Bob's token can edit now, as his window can, and his edit is his.
    alice.ok("PUT", f"/documents/{shared}/shares/bob", {"role": "editor"})
    done = bob.ok("POST", f"/documents/{shared}/operations", {"revision": 1, "operation": [7, " three"]})
    assert done["revision"] == 2
    heard = window.event("documentOperation", lambda e: e["document"] == shared and e["revision"] == 2)
    assert heard["author"]["user"] == "bob"
    window.close()


def test_a_token_that_is_expired_forged_or_for_another_server_is_refused_with_401_saying_why(
        jwt_servers, tokens: Tokens, workspace: str):
    server = jwt_servers()
    api = API(server.port, None, workspace)
    valid = tokens.user("alice", {workspace: "owner"})
    assert api.as_key(valid).ok("GET", "/documents")["documents"] == []
    cases = [
        (tokens.user("alice", {workspace: "owner"}, expires_in=-120), "token_expired", "expired"),
        (tokens.user("alice", {workspace: "owner"}, secret="another-secret-of-at-least-32-bytes!"), "unauthenticated",
         "signature"),
        (tokens.user("alice", {workspace: "owner"}, audience="another-service"), "unauthenticated", "`aud`"),
        (tokens.user("alice", {workspace: "owner"}, kid="k9"), "unauthenticated", "`k9`"),
        (tokens.service("crm", [workspace], "write", iss="https://elsewhere.test"), "unauthenticated", "`iss`"),
        (valid[:-4] + ("AAAA" if not valid.endswith("AAAA") else "BBBB"), "unauthenticated", "signature"),
        ("not.a.jwt", "unauthenticated", "token"),
    ]
    for token, code, says in cases:
        answer = api.as_key(token).call("GET", "/documents")
        assert answer.status == 401 and answer.error["code"] == code, (token, answer)
        assert says in answer.error["message"], answer
        assert answer.headers.get("www-authenticate", "").startswith("Bearer")
    assert api.as_key(valid).ok("GET", "/documents")["documents"] == []


def test_failed_tokens_are_limited_per_address_before_any_check(jwt_servers, tokens: Tokens, keys: Keys, workspace: str):
    server = jwt_servers(authFailureBurst=3, authFailuresPerMinute=1)
    api = API(server.port, None, workspace)
    forged = tokens.user("mallory", {workspace: "owner"}, secret="another-secret-of-at-least-32-bytes!")
    for _ in range(3):
        assert api.as_key(forged).call("GET", "/documents").status == 401
    # Over the burst: even a valid token from this address is turned away unchecked, for a while.
    answer = api.as_key(tokens.user("alice", {workspace: "owner"})).call("GET", "/documents")
    assert answer.status == 429 and answer.error["code"] == "rate_limited", answer
    assert "failed authentications" in answer.error["message"] and int(answer.headers["retry-after"]) >= 1
    # An API key is no signature to check (a look-up of its hash): it still works from here.
    assert api.as_key(keys.secrets["writer"]).call("GET", "/documents").status == 200


def test_every_token_of_one_subject_shares_one_rate(jwt_servers, tokens: Tokens, workspace: str):
    server = jwt_servers(apiRateLimitPerSecond=1, apiRateLimitBurst=3)
    api = API(server.port, None, workspace)
    first = api.as_key(tokens.user("bob", {workspace: "editor"}))
    second = api.as_key(tokens.user("bob", {workspace: "editor"}, expires_in=1800))
    statuses = [x.call("GET", "/documents").status for x in (first, second, first, second)]
    assert statuses[:3] == [200, 200, 200] and statuses[3] == 429, statuses
    limited = second.call("GET", "/documents")
    assert limited.status == 429 and "across the cluster" in limited.error["message"]
    # Another subject has its own budget.
    assert api.as_key(tokens.user("carol", {workspace: "editor"})).call("GET", "/documents").status == 200
