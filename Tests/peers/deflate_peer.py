"""A permessage-deflate peer for the Swift end-to-end tests (Tests/PanesServerTests/
TransportDeflateTests.swift): Python's `websockets` compresses, the real server inflates and
compresses back. The test client in Tests/PanesTestSupport does not implement deflate.

Usage: deflate_peer.py PORT MODE
  large         64 KiB and 900 KiB messages both ways, then 20 x 64 KiB in a row; every reply checked
  invalid-utf8  a compressed text frame that is not UTF-8; expects close 1007
  oversize      a compressed message that inflates past maxMessageBytes; expects close 1009
Prints one JSON line ({"deflate": bool, ...}) and exits 0 when everything held, 1 otherwise.
"""
import json
import sys

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

port, mode = int(sys.argv[1]), sys.argv[2]
result = {"mode": mode}


def request(ws, ident, kind, **fields):
    ws.send(json.dumps({"type": kind, "id": ident, **fields}))


def reply(ws, ident):
    while True:
        message = json.loads(ws.recv(timeout=60))
        if message.get("type") == "reply" and message.get("re") == ident:
            return message


def close_code(ws):
    try:
        while True:
            ws.recv(timeout=30)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


with connect(f"ws://127.0.0.1:{port}/ws", subprotocols=["panes.v1"], max_size=None, proxy=None,
             open_timeout=10, ping_interval=None) as ws:
    extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "")
    result["deflate"] = "permessage-deflate" in extensions
    ok = True
    if mode == "large":
        request(ws, 1, "connect", protocol=1, auth={"name": "deflate"}, client="deflate-peer")
        ok &= reply(ws, 1)["ok"] is True
        sizes = [64 * 1024, 900 * 1024] + [64 * 1024] * 20
        # The first two one at a time, the rest sent all at once before reading any reply.
        for ident, size in enumerate(sizes[:2], start=2):
            request(ws, ident, "setUserInfo", userInfo={"pad": "x" * size}, mode="replace")
            answer = reply(ws, ident)
            ok &= answer["ok"] is True and len(answer["result"]["userInfo"]["pad"]) == size
        for ident, size in enumerate(sizes[2:], start=4):
            request(ws, ident, "setUserInfo", userInfo={"pad": chr(97 + ident % 26) * size}, mode="replace")
        for ident, size in enumerate(sizes[2:], start=4):
            answer = reply(ws, ident)
            ok &= answer["ok"] is True and answer["result"]["userInfo"]["pad"] == chr(97 + ident % 26) * size
        result["replies"] = len(sizes)
    elif mode == "invalid-utf8":
        ws.send(b'{"type":"ping","id":1,"x":"\xff\xfe"}', text=True)
        result["close"] = close_code(ws)
        ok = result["close"] == 1007
    elif mode == "oversize":
        ws.send(json.dumps({"type": "ping", "id": 1, "pad": "x" * (2 * 1024 * 1024)}))
        result["close"] = close_code(ws)
        ok = result["close"] == 1009
    result["ok"] = bool(ok)
print(json.dumps(result))
sys.exit(0 if result["ok"] else 1)
