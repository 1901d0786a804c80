#!/usr/bin/env python3
"""Writes openapi.json, the OpenAPI 3.1 description of the HTTP API, from the routes below and
the shapes PROTOCOL.schema.json already defines (results, error objects, document summaries),
so the API's answers and the WebSocket protocol's replies are described once.

Usage: scripts/openapi.py          # writes openapi.json
       scripts/openapi.py --check  # fails if openapi.json is not what this script writes
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = json.loads((ROOT / "PROTOCOL.schema.json").read_text())
DEFS = PROTOCOL["$defs"]


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def rewrite(value):
    """PROTOCOL.schema.json's `#/$defs/a/$defs/b` references as component names `a.b`."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str) and item.startswith("#/$defs/"):
                out[key] = "#/components/schemas/" + item[len("#/$defs/"):].replace("/$defs/", ".")
            else:
                out[key] = rewrite(item)
        return out
    if isinstance(value, list):
        return [rewrite(item) for item in value]
    return value


def collect(names: list[str]) -> dict:
    """The named definitions and everything they reference, as components."""
    schemas: dict = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in schemas:
            continue
        node = DEFS
        for part in name.split("."):
            node = node[part] if part in node else node["$defs"][part]
        schema = rewrite({k: v for k, v in node.items() if k != "$defs"})
        schemas[name] = schema
        for found in re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(schema)):
            todo.append(found)
    return schemas


ERROR_STATUSES = {
    "400": "The request is wrong (`malformed_json`, `invalid_message`, `missing_field`, `invalid_field`…).",
    "401": "No API key or token, a key that is unknown or revoked, or a token that is not valid (`unauthenticated`: forged, wrong `kid`, `iss` or `aud`, malformed) or has expired (`token_expired`).",
    "403": "The key or service token may not act in this workspace or is read-only and the request writes; a user's token names a workspace the user is not a member of (`not_a_member`), another user, or a document the user's role there does not allow this on (`forbidden`).",
    "404": "No such route (`unknown_type`), document or session (`document_not_found`, `session_not_found`).",
    "409": "Compare-and-set failed (`version_conflict`) or a revision is newer than the document's (`revision_in_future`).",
    "410": "The revision is older than the store keeps (`revision_unavailable`).",
    "413": "The body or a value is over its limit (`too_large`; the message names the setting).",
    "422": "A count limit, an operation that does not fit the document, an `Idempotency-Key` reused for another request.",
    "429": "Over the key's or the token subject's rate across the cluster (`apiRateLimitPerSecond`), or too many failed authentications from this address (`authFailureBurst`): wait `Retry-After` seconds.",
    "503": "The store could not make it durable, or cannot tell yet (`storage_failed`, `outcome_unknown`): retry with the same `Idempotency-Key`.",
}

WORKSPACE = {"name": "workspace", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"}}
DOCUMENT = {"name": "document", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 64}}
USER_PATH = {"name": "user", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"}}
USER_QUERY = {"name": "user", "in": "query", "required": False, "description": "A user's domain; without it, the workspace's.",
              "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"}}
LINK = {"name": "link", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 64}}
SHARE_USER = {"name": "user", "in": "path", "required": True, "description": "A user id, compared by its bytes.",
              "schema": {"type": "string", "minLength": 1, "maxLength": 64}}
SESSION = {"name": "session", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 64}}
KEY_PATH = {"name": "keyPath", "in": "path", "required": True, "schema": ref("keyPath")}
IDEMPOTENCY = {"name": "Idempotency-Key", "in": "header", "required": False,
               "description": "1 to 128 bytes. A retried write with the same key (and the same body) is applied once and answered with what the first attempt was answered; with another body it gets `idempotency_key_reused`.",
               "schema": {"type": "string", "minLength": 1, "maxLength": 128}}


def json_body(schema: dict, required: bool = True) -> dict:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def operation(summary: str, ok: str, schema: dict, parameters: list, body: dict | None = None, writes: bool = False,
              errors: tuple = ("400", "401", "403", "404", "429")) -> dict:
    op = {"summary": summary, "parameters": parameters + ([IDEMPOTENCY] if writes else []),
          "security": [{"bearer": []}],
          "responses": {ok: {"description": "Done" + (" (durable)" if writes else ""),
                             "content": {"application/json": {"schema": schema}}}}}
    for status in errors + (("413", "503") if writes else ()):
        op["responses"][status] = {"$ref": f"#/components/responses/error{status}"}
    if body is not None:
        op["requestBody"] = body
    return op


def build() -> dict:
    results = "results."
    document_text = {"type": "object", "properties": {
        "document": ref("documentSummary"), "revision": {"type": "integer", "minimum": 0}, "text": {"type": "string"}},
        "required": ["document", "revision", "text"], "additionalProperties": False}
    preferences = {"type": "object", "properties": {
        "domain": ref("preferenceDomainName"), "version": {"type": "integer", "minimum": 0},
        "values": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"value": {}, "version": {"type": "integer", "minimum": 0}},
            "required": ["value", "version"], "additionalProperties": False}}},
        "required": ["domain", "version", "values"], "additionalProperties": False}
    create_body = {"type": "object", "properties": {"title": ref("documentTitle"), "text": {"type": "string"}},
                   "additionalProperties": False}
    edit_body = {"type": "object", "properties": {
        "revision": {"type": "integer", "minimum": 0, "description": "the revision the operation was made on"},
        "operation": ref("operation"),
        "opId": {"type": "string", "minLength": 1, "maxLength": 128,
                 "description": "the operation's id; default `http.<Idempotency-Key>`, else a new one"}},
        "required": ["revision", "operation"], "additionalProperties": False}
    rename_body = {"type": "object", "properties": {"title": ref("documentTitle")}, "required": ["title"],
                   "additionalProperties": False}
    preference_body = {"type": "object", "properties": {
        "value": {"description": "any JSON value, null included"},
        "ifVersion": {"type": ["integer", "null"], "minimum": 0, "description": "compare-and-set: the key's version read"}},
        "required": ["value"], "additionalProperties": False}
    refresh_body = {"type": "object", "properties": {
        k: v for k, v in DEFS["requests"]["$defs"]["requestRefresh"]["properties"].items()
        if k in ("title", "subtitle", "snapshot", "activity")}, "additionalProperties": False}
    refresh_body = rewrite(refresh_body)
    requests = DEFS["requests"]["$defs"]
    share_body = rewrite({"type": "object", "properties": {"role": requests["shareDocument"]["properties"]["role"]},
                          "required": ["role"], "additionalProperties": False})
    link_body = rewrite({"type": "object", "properties": {k: requests["createDocumentLink"]["properties"][k]
                                                          for k in ("role", "expiresInMs")},
                         "required": ["role"], "additionalProperties": False})
    base = "/api/v1/workspaces/{workspace}"
    paths = {
        f"{base}/documents": {
            "get": operation("The workspace's documents.", "200", ref(results + "observeDocuments"), [WORKSPACE]),
            "post": operation("Create a document (revision 0 is `text`).", "201", ref(results + "createDocument"),
                              [WORKSPACE], json_body(create_body), writes=True, errors=("400", "401", "403", "422", "429")),
        },
        f"{base}/documents/{{document}}": {
            "get": operation("A document's text at its latest revision, or at `revision` while the store keeps it.", "200",
                             document_text, [WORKSPACE, DOCUMENT, {"name": "revision", "in": "query", "required": False,
                                                                   "schema": {"type": "integer", "minimum": 0}}],
                             errors=("400", "401", "403", "404", "409", "410", "429")),
            "patch": operation("Rename a document.", "200", ref(results + "renameDocument"), [WORKSPACE, DOCUMENT],
                               json_body(rename_body), writes=True),
            "delete": operation("Delete a document, its log and every reference to it.", "200",
                                ref(results + "deleteDocument"), [WORKSPACE, DOCUMENT], writes=True),
        },
        f"{base}/documents/{{document}}/operations": {
            "post": operation("Apply an operation made on `revision`, as the key's actor: transformed past what was "
                              "applied since, committed, and heard by every window.", "200", ref(results + "edit"),
                              [WORKSPACE, DOCUMENT], json_body(edit_body), writes=True,
                              errors=("400", "401", "403", "404", "409", "410", "422", "429")),
        },
        f"{base}/documents/{{document}}/shares": {
            "get": operation("The document's grants and links (never their tokens). Its owners, and the backend.", "200",
                             ref(results + "listDocumentShares"), [WORKSPACE, DOCUMENT]),
        },
        f"{base}/documents/{{document}}/shares/{{user}}": {
            "put": operation("Give a user a role for the document (`none` takes it away); open windows hear of it at "
                             "once.", "200", ref(results + "shareDocument"), [WORKSPACE, DOCUMENT, SHARE_USER],
                             json_body(share_body), writes=True, errors=("400", "401", "403", "404", "422", "429")),
            "delete": operation("Remove the user's grant: the workspace role holds for them again.", "200",
                                ref(results + "unshareDocument"), [WORKSPACE, DOCUMENT, SHARE_USER], writes=True),
        },
        f"{base}/documents/{{document}}/links": {
            "post": operation("A link whose secret token (in this answer only) opens the document with `role`. A retry "
                              "makes another link.", "201", ref(results + "createDocumentLink"), [WORKSPACE, DOCUMENT],
                              json_body(link_body), writes=True, errors=("400", "401", "403", "404", "422", "429")),
        },
        f"{base}/documents/{{document}}/links/{{link}}": {
            "delete": operation("Revoke a link: windows that opened the document through it lose what it gave at once.",
                                "200", ref(results + "revokeDocumentLink"), [WORKSPACE, DOCUMENT, LINK], writes=True),
        },
        f"{base}/preferences": {
            "get": operation("A preference domain's stored values.", "200", preferences, [WORKSPACE, USER_QUERY]),
        },
        f"{base}/preferences/{{keyPath}}": {
            "put": operation("Set a preference, compare-and-set with `ifVersion`.", "200", ref(results + "setPreference"),
                             [WORKSPACE, KEY_PATH, USER_QUERY], json_body(preference_body), writes=True,
                             errors=("400", "401", "403", "409", "422", "429")),
            "delete": operation("Remove a preference.", "200", ref(results + "removePreference"),
                                [WORKSPACE, KEY_PATH, USER_QUERY], writes=True),
        },
        f"{base}/users/{{user}}/sessions": {
            "get": operation("A user's sessions, as the switcher lists them.", "200", ref(results + "listSessions"),
                             [WORKSPACE, USER_PATH]),
        },
        f"{base}/users/{{user}}/sessions/{{session}}/refresh": {
            "post": operation("Refresh a session's switcher entry (title, subtitle, snapshot, activity).", "200",
                              ref(results + "requestRefresh"), [WORKSPACE, USER_PATH, SESSION], json_body(refresh_body),
                              writes=True),
        },
        f"{base}/users/{{user}}/sessions/{{session}}": {
            "delete": operation("Destroy a session: its window closes with the animation, and it is discarded.", "200",
                                ref(results + "requestDestruction"),
                                [WORKSPACE, USER_PATH, SESSION,
                                 {"name": "animation", "in": "query", "required": False, "schema": ref("dismissalAnimation")}],
                                writes=True),
        },
    }
    names = [results + n for n in ("observeDocuments", "createDocument", "renameDocument", "deleteDocument", "edit",
                                   "setPreference", "removePreference", "listSessions", "requestRefresh",
                                   "requestDestruction", "listDocumentShares", "shareDocument", "unshareDocument",
                                   "createDocumentLink", "revokeDocumentLink")]
    schemas = collect(names + ["documentSummary", "documentTitle", "operation", "keyPath", "preferenceDomainName",
                               "dismissalAnimation", "error", "snapshot", "activityIn"])
    schemas["errorBody"] = {"type": "object", "description": "Every error answer: the protocol's error object.",
                            "properties": {"error": ref("error")}, "required": ["error"], "additionalProperties": False}
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {"title": "Panes HTTP API", "version": "1",
                 "description": "JSON over HTTP on the server's own port, for an application's servers. Every write goes "
                                "through the same path as a window's request: durable before the answer, heard by every "
                                "window, in the same order on every node. Errors are the WebSocket protocol's error "
                                "objects (PROTOCOL.md). Generated by scripts/openapi.py."},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "Either an API key's secret (`panes apikey create`; the server keeps its SHA-256), or, "
                               "on a server with `--auth jwt`, a JWT checked as a window's token is (keys, `kid`, `alg`, "
                               "`iss`, `aud`, `exp`; failed ones limited per address). An API key, and a token with the "
                               "service role (claim `panes.service`: `{\"workspaces\": [...], \"access\": \"read\"|"
                               "\"write\"}`), are the backend: an owner of every document in their workspaces. A user's "
                               "token (`panes.workspaces`) acts as that user, with the rights a window of theirs has on "
                               "each document."}},
            "responses": {f"error{status}": {"description": text, "content": {"application/json": {"schema": ref("errorBody")}}}
                          for status, text in ERROR_STATUSES.items()},
            "schemas": dict(sorted(schemas.items())),
        },
    }


def main() -> None:
    text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
    target = ROOT / "openapi.json"
    if "--check" in sys.argv:
        if not target.exists() or target.read_text() != text:
            sys.exit("openapi.json is not what scripts/openapi.py writes: run scripts/openapi.py")
        return
    target.write_text(text)


if __name__ == "__main__":
    main()
