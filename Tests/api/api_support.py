"""Support for the HTTP API tests: a `panes serve` with API keys made by `panes apikey create`,
an HTTP client that checks every answer it receives against openapi.json, and the webhook
receiver of Tests/peers. The WebSocket client is the cluster tests' (panes_cluster.Client)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import jsonschema
from jsonschema.exceptions import best_match

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
from panes_cluster import Node  # noqa: E402

BINARY = Path(os.environ.get("PANES_BINARY", ROOT / ".build" / "debug" / "panes"))
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class OpenAPI:
    """openapi.json, and a check of one answer against the operation it answers."""

    def __init__(self) -> None:
        self.root = json.loads((ROOT / "openapi.json").read_text())
        assert self.root["openapi"].startswith("3.1")
        self.routes = []
        for template, item in self.root["paths"].items():
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
            self.routes.append((re.compile(pattern), item))
        self.checked = 0

    def schema_for(self, method: str, path: str, status: int) -> dict:
        for pattern, item in self.routes:
            if pattern.match(path) and method.lower() in item:
                responses = item[method.lower()]["responses"]
                break
        else:
            # An answer to a path no route has: the error body every error answer has.
            assert status == 404, f"{method} {path} answered {status} but openapi.json has no such operation"
            return {"$ref": "#/components/schemas/errorBody"}
        response = responses.get(str(status))
        assert response is not None, f"{method} {path}: status {status} is not in openapi.json ({sorted(responses)})"
        if "$ref" in response:
            response = self.root["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        return response["content"]["application/json"]["schema"]

    def check(self, method: str, path: str, status: int, body) -> None:
        schema = dict(self.schema_for(method, path, status))
        schema["components"] = self.root["components"]
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(body))
        if errors:
            best = best_match(errors)
            raise AssertionError(f"{method} {path} -> {status} does not match openapi.json at {best.json_path}: "
                                 f"{best.message[:400]}\n{json.dumps(body)[:800]}")
        self.checked += 1


SPEC = OpenAPI()


class Response:
    def __init__(self, status: int, headers: dict, body) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def error(self) -> dict:
        return self.body["error"]

    def __repr__(self) -> str:
        return f"<{self.status} {json.dumps(self.body)[:300]}>"


class API:
    """HTTP API requests with one key; every answer is checked against openapi.json."""

    def __init__(self, port: int, secret: str | None, workspace: str) -> None:
        self.port = port
        self.secret = secret
        self.workspace = workspace

    def call(self, method: str, path: str, body=None, query: dict | None = None, key: str | None = None,
             headers: dict | None = None, raw: bytes | None = None) -> Response:
        full = f"/api/v1/workspaces/{quote(self.workspace)}{path}"
        target = full + ("?" + urlencode(query) if query else "")
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if self.secret:
            sent["Authorization"] = f"Bearer {self.secret}"
        if key:
            sent["Idempotency-Key"] = key
        sent.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            sent["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            data = b""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, target, body=data, headers=sent)
            answer = connection.getresponse()
            text = answer.read()
            assert answer.getheader("Content-Type", "").startswith("application/json"), text
            parsed = json.loads(text)
            SPEC.check(method, full, answer.status, parsed)
            return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, parsed)
        finally:
            connection.close()

    def ok(self, method: str, path: str, body=None, status: int = 200, **kwargs):
        response = self.call(method, path, body, **kwargs)
        assert response.status == status, response
        return response.body

    def as_key(self, secret: str | None) -> "API":
        return API(self.port, secret, self.workspace)

    def in_workspace(self, workspace: str) -> "API":
        return API(self.port, self.secret, workspace)


def make_key(folder: Path, key_id: str, workspaces: list[str], access: str, name: str | None = None) -> tuple[str, dict]:
    """A key made by `panes apikey create`: its secret and its keys-file entry."""
    args = [str(BINARY), "apikey", "create", "--id", key_id, "--access", access]
    for workspace in workspaces:
        args += ["--workspace", workspace]
    if name:
        args += ["--name", name]
    lines = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
    secret, entry = lines[1], json.loads(lines[3])
    assert secret.startswith("pk_") and secret not in json.dumps(entry)
    return secret, entry


def write_keys(path: Path, entries: list[dict]) -> None:
    path.write_text(json.dumps({"keys": entries}))


class Tokens:
    """A `--jwt-keys` file with one HS256 key, and tokens signed with it (or, to test refusals,
    with anything else)."""

    ISSUER = "https://app.test"
    AUDIENCE = "panes-api-test"

    def __init__(self) -> None:
        self.secret = "s" * 24 + os.urandom(12).hex()
        self.path = Path(tempfile.mkdtemp(prefix="panes-jwt-")) / "jwt-keys.json"
        self.path.write_text(json.dumps({"issuer": self.ISSUER, "audience": self.AUDIENCE,
                                         "keys": [{"kid": "k1", "alg": "HS256", "secret": self.secret}]}))
        self.path.chmod(0o600)

    @property
    def args(self) -> list[str]:
        return ["--auth", "jwt", "--jwt-keys", str(self.path)]

    def sign(self, sub: str, panes: dict, name: str | None = None, expires_in: float = 3600, audience: str | None = None,
             kid: str = "k1", secret: str | None = None, **claims) -> str:
        now = time.time()
        body = {"iss": self.ISSUER, "aud": audience or self.AUDIENCE, "sub": sub, "name": name or sub,
                "iat": int(now), "exp": int(now + expires_in), "panes": panes, **claims}

        def encode(data: bytes) -> str:
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
        signing = encode(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode()) + "." + \
            encode(json.dumps(body).encode())
        signature = hmac.new((secret or self.secret).encode(), signing.encode(), hashlib.sha256).digest()
        return signing + "." + encode(signature)

    def user(self, sub: str, workspaces: dict[str, str], **kwargs) -> str:
        return self.sign(sub, {"workspaces": workspaces}, **kwargs)

    def service(self, sub: str, workspaces: list[str], access: str, **kwargs) -> str:
        return self.sign(sub, {"service": {"workspaces": workspaces, "access": access}}, **kwargs)


class Receiver:
    """Tests/peers/webhook_receiver.py in a process of its own, its log read back."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="panes-hooks-"))
        self.log = self.dir / "received.jsonl"
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "Tests" / "peers" / "webhook_receiver.py"), "--secret", SECRET,
             "--log", str(self.log)], stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline().split()[1])

    def url(self, path: str = "/hooks") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def plan(self, path: str, actions: list[dict], default: dict | None = None) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        connection.request("POST", "/_plan", body=json.dumps({"path": path, "actions": actions, "default": default}))
        assert connection.getresponse().status == 204
        connection.close()

    def received(self) -> list[dict]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            record = json.loads(line)
            record["event"] = json.loads(record["body"])
            out.append(record)
        return out

    def wait(self, predicate, timeout: float = 20) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            got = self.received()
            if predicate(got):
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"the receiver did not get what was expected: {[r['event'] for r in got]}")
            time.sleep(0.05)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


class Server(Node):
    """One `panes serve` on its own data folder (SQLite by default) with an API keys file and a
    configuration; restartable on its port and data (`start`, `kill`, `stop` are the cluster
    tests' node's)."""

    def __init__(self, keys: Path, config: dict, store: str = "sqlite", args: list[str] = ()) -> None:
        folder = Path(tempfile.mkdtemp(prefix="panes-api-"))
        (folder / "config.json").write_text(json.dumps(config))
        super().__init__(store, "http://127.0.0.1", folder / "config.json", 0,
                         ["--data", str(folder / "data"), "--api-keys", str(keys), *args])
        self.start()

    @property
    def ws(self) -> str:
        return self.url

    def reload(self) -> None:
        """SIGHUP: the keys file is read again; waits for the server to say so."""
        before = sum("API keys read again" in line for line in self.log)
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while sum("API keys read again" in line for line in self.log) == before:
            assert time.monotonic() < deadline, "the server did not read its keys again"
            time.sleep(0.02)


class Keys:
    """A keys file and the secrets of its keys: `writer` and `reader` for the test's workspace,
    `stranger` (write) for another workspace."""

    def __init__(self, workspace: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="panes-keys-"))
        self.path = self.dir / "keys.json"
        self.secrets: dict[str, str] = {}
        self.entries: dict[str, dict] = {}
        self.add("writer", [workspace], "write", name="CRM sync")
        self.add("reader", [workspace], "read")
        self.add("stranger", ["elsewhere"], "write")

    def add(self, key_id: str, workspaces: list[str], access: str, name: str | None = None) -> str:
        secret, entry = make_key(self.dir, key_id, workspaces, access, name)
        self.secrets[key_id] = secret
        self.entries[key_id] = entry
        self.save()
        return secret

    def remove(self, key_id: str) -> None:
        del self.entries[key_id]
        self.save()

    def save(self) -> None:
        write_keys(self.path, list(self.entries.values()))


def config(receiver: Receiver | None, **settings) -> dict:
    """A configuration with quick webhook retries, an endpoint at `receiver` if given, and `settings`."""
    base = {"webhookPollMs": 50, "webhookRetryFirstMs": 50, "webhookRetryMaxMs": 400, "webhookTimeoutMs": 2_000,
            "webhookCoalesceMs": 0}
    base.update(settings)
    out: dict = {"settings": base}
    if receiver:
        out["webhooks"] = [{"id": "crm", "url": receiver.url("/hooks"), "secret": SECRET}]
    return out
