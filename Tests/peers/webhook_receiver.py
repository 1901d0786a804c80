#!/usr/bin/env python3
"""A webhook receiver for the tests: it checks each delivery's Standard Webhooks signature
with Python's own hmac (an implementation independent of the server's), answers as the test
planned (statuses, delays, redirects, huge bodies), and appends what it received to a log
file, one JSON object per line, so the log survives the receiver being stopped and started
again on the same port.

    webhook_receiver.py --secret whsec_... --log FILE [--port N] [--tls CERT KEY]

Prints "listening PORT" once it accepts connections. Control requests (not logged):
    POST /_plan {"path": "/a", "actions": [{"status": 500}, {"status": 200, "delay_ms": 800}],
                 "default": {"status": 200}}  -- answers for that path, in turn, then the default
    POST /_plan {"id": "evt_1", "actions": [...]} -- answers for one webhook-id (before the path's)
    GET /_stats -- {"/a": {"in_flight": 0, "max_in_flight": 2}}
"""
import argparse
import base64
import hashlib
import hmac
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
plans = {}      # path or id -> {"actions": [...], "default": {...}}
stats = {}      # path -> {"in_flight": n, "max_in_flight": n}
args = None
key = b""


def verify(message_id, timestamp, body, header):
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for entry in header.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


def next_action(path, message_id):
    with lock:
        for name in (message_id, path):
            plan = plans.get(name)
            if plan is None:
                continue
            if plan["actions"]:
                return plan["actions"].pop(0)
            if plan.get("default") is not None:
                return plan["default"]
        return {"status": 200}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            try:
                self.wfile.write(body)
            except OSError:
                pass

    def do_GET(self):
        if self.path == "/_stats":
            with lock:
                body = json.dumps(stats).encode()
            self.reply(200, body, [("Content-Type", "application/json")])
        else:
            self.reply(404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path == "/_plan":
            plan = json.loads(body)
            with lock:
                plans[plan.get("id") or plan["path"]] = {"actions": plan.get("actions", []), "default": plan.get("default")}
            self.reply(204)
            return
        message_id = self.headers.get("webhook-id", "")
        timestamp = self.headers.get("webhook-timestamp", "")
        signature = self.headers.get("webhook-signature", "")
        with lock:
            entry = stats.setdefault(self.path, {"in_flight": 0, "max_in_flight": 0})
            entry["in_flight"] += 1
            entry["max_in_flight"] = max(entry["max_in_flight"], entry["in_flight"])
            record = {
                "path": self.path, "id": message_id, "timestamp": timestamp,
                "signature_valid": verify(message_id, timestamp, body, signature),
                "content_type": self.headers.get("Content-Type", ""), "body": body.decode("utf-8", "replace"),
                "received_at": time.time(),
            }
            with open(args.log, "a") as log:
                log.write(json.dumps(record) + "\n")
        answering = True
        try:
            action = next_action(self.path, message_id)
            if action.get("delay_ms"):
                time.sleep(action["delay_ms"] / 1000)
            headers = []
            if action.get("location"):
                headers.append(("Location", action["location"]))
            if action.get("retry_after") is not None:
                headers.append(("Retry-After", str(action["retry_after"])))
            # Counted out before the reply goes: once the sender has the reply it may start its
            # next delivery, whose handler could otherwise count itself in before this one left.
            with lock:
                stats[self.path]["in_flight"] -= 1
            answering = False
            self.reply(action.get("status", 200), b"x" * action.get("body_bytes", 0), headers)
        finally:
            if answering:
                with lock:
                    stats[self.path]["in_flight"] -= 1


def main():
    global args, key
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    secret = args.secret[len("whsec_"):] if args.secret.startswith("whsec_") else args.secret
    key = base64.b64decode(secret + "==")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
