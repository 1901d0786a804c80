"""authflood (issue 26, item 5): a legitimate scene's ping while one address floods the
server with RS256 and ES256 tokens whose signatures are random.

The server runs `--auth jwt` with three keys: an HS256 secret the legitimate scene's token is
signed with, and an RS256 (2048-bit) and an ES256 (P-256) public key, made with `openssl`,
that the flood's tokens name. The legitimate scene (panes-load `ping`, from 127.0.0.1) pings
`PING_RATE` times a second throughout; the phases alternate, in the same run, between idle
(nothing else happening) and a flood (panes-load `authflood` from another loopback address,
one new connection per forged token, N RS256 tokens a second, or ES256 at the rate the issue
measured beside it), round after round, ending idle. Each flood phase is compared with the two
idle phases around it: ratio = its ping p99 ÷ theirs (the goal: at most 1.5), so contention
from elsewhere on the machine falls on both sides of the ratio.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import time
from typing import Optional

from . import log, procs
from .loadgen import Generator
from .workloads import _ms, _row, settle

PING_RATE = 200
SECRET = "a-benchmark-secret-of-at-least-thirty-two-bytes-0123456789"
ISSUER, AUDIENCE = "https://bench.panes.test", "panes-bench"
WORKSPACE = "bench"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segment(value: dict) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode())


def _claims(user: str) -> dict:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": user, "name": user, "iat": now, "exp": now + 86400,
            "panes": {"workspaces": {WORKSPACE: "editor"}}}


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def prepare_keys(workdir: str) -> dict:
    """The key file, the legitimate scene's token, and each flood's token prefix."""
    rsa, ec = os.path.join(workdir, "rsa.pem"), os.path.join(workdir, "ec.pem")
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa)
    _openssl("pkey", "-in", rsa, "-pubout", "-out", rsa + ".pub")
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ec)
    _openssl("pkey", "-in", ec, "-pubout", "-out", ec + ".pub")
    keys = os.path.join(workdir, "jwt-keys.json")
    with open(keys, "w") as f:
        json.dump({"issuer": ISSUER, "audience": AUDIENCE, "keys": [
            {"kid": "hs-1", "alg": "HS256", "secret": SECRET},
            {"kid": "rs-1", "alg": "RS256", "publicKeyFile": rsa + ".pub"},
            {"kid": "es-1", "alg": "ES256", "publicKeyFile": ec + ".pub"},
        ]}, f)
    os.chmod(keys, 0o600)
    signing = _segment({"alg": "HS256", "typ": "JWT", "kid": "hs-1"}) + "." + _segment(_claims("bench"))
    token = signing + "." + _b64(hmac.new(SECRET.encode(), signing.encode(), hashlib.sha256).digest())
    prefix = lambda alg, kid: _segment({"alg": alg, "typ": "JWT", "kid": kid}) + "." + _segment(_claims("mallory")) + "."  # noqa: E731
    return {"file": keys, "token": token,
            "floods": {"rs256": (prefix("RS256", "rs-1"), 256), "es256": (prefix("ES256", "es-1"), 64)}}


def _flood(ctx, port: int, workdir: str, kind: str, prefix: str, sig_bytes: int, rate: float, seconds: float,
           source: str) -> Generator:
    attempts = int(rate * seconds * 1.5) + 100
    args = ["authflood", "--protocol", "panes", "--port", str(port), "--n", str(attempts), "--rate", f"{rate:g}",
            "--duration", f"{seconds:g}", "--forge", prefix, "--forge-bytes", str(sig_bytes),
            "--workspace", WORKSPACE, "--sources", source, "--concurrency", "64", "--wait-go", "--hold", "-1",
            "--quiet", "--timeout", str(ctx.timeout)]
    return Generator(args, os.path.join(workdir, f"flood-{kind}.log"))


def run_authflood(ctx, system, rate: int) -> dict:
    """N = RS256 forged tokens a second; ES256 floods at `ctx.authflood_es_ratio` of it."""
    row = _row("authflood", rate, system)
    workdir = ctx.run_dir(f"authflood-{system.name}-{rate}")
    keys = prepare_keys(workdir)
    running = system.start(ctx, workdir, extra=["--auth", "jwt", "--jwt-keys", keys["file"]])
    seconds, rounds = ctx.authflood_seconds, ctx.authflood_rounds
    rates = {"rs256": float(rate), "es256": round(rate * ctx.authflood_es_ratio, 1)}
    phases: list[dict] = []
    try:
        settle()
        pinger = Generator(["ping", "--protocol", "panes", "--port", str(running.port), "--n", "1",
                            "--rate", str(PING_RATE), "--token", keys["token"], "--workspace", WORKSPACE,
                            "--hold", "-1", "--quiet", "--timeout", str(ctx.timeout)],
                           os.path.join(workdir, "ping.log"))
        if not pinger.wait("ready", 60) or not (pinger.ready or {}).get("ready"):
            raise RuntimeError(f"the legitimate scene did not connect: {(pinger.ready or {}).get('first_error')}")
        time.sleep(1)  # the first pings after connecting are not part of any phase
        pinger.send("go")
        pinger.wait("phase", 30)
        plan = [k for _ in range(rounds) for k in ("idle", "rs256", "idle", "es256")] + ["idle"]
        for index, kind in enumerate(plan):
            cpu0, phase = procs.cpu_seconds(running.pid), procs.Phase()
            flood = None
            if kind == "idle":
                time.sleep(seconds)
            else:
                prefix, sig_bytes = keys["floods"][kind]
                # Each flood from an address of its own: a fresh burst each time, and ports to spare.
                flood = _flood(ctx, running.port, workdir, f"{kind}-{index}", prefix, sig_bytes, rates[kind], seconds,
                               f"127.0.0.{21 + index}")
                flood.wait("ready", 60)
                flood.send("go")
                flood.finish(seconds + 60)
            pinger.send("go")
            cut = pinger.wait("phase", 30) or {}
            cpu1 = procs.cpu_seconds(running.pid)
            phase.end()
            r = (flood.result if flood else None) or {}
            phases.append({
                "kind": kind, "ping_ms": _ms(cut.get("latency_ns")), "lost": cut.get("lost"),
                "server_cores": round((cpu1 - cpu0) / phase.wall, 3) if phase.wall else None,
                "flood": {k: r.get(k) for k in ("attempts", "attempts_per_sec", "turned_away", "limited", "checked",
                                                "other", "accepted", "first_error")} if flood else None,
                **phase.background(cpu1 - cpu0),
            })
        pinger.close_stdin()
        pinger.finish(30)
        alive = running.proc.poll() is None
    finally:
        procs.stop(running.proc)

    row["phases"] = phases
    row["rates"] = rates
    idle = [p for p in phases if p["kind"] == "idle"]
    row["latency_ms"] = _pooled(idle)
    for kind in ("rs256", "es256"):
        ratios, floods = [], []
        for i, p in enumerate(phases):
            if p["kind"] != kind:
                continue
            around = [q for q in (phases[i - 1], phases[i + 1] if i + 1 < len(phases) else None)
                      if q and q["kind"] == "idle" and q["ping_ms"]]
            if p["ping_ms"] and around:
                ratios.append(round(p["ping_ms"]["p99"] / statistics.mean(q["ping_ms"]["p99"] for q in around), 2))
            floods.append(p)
        row[kind] = {
            "rate": rates[kind], "p99_ratios": ratios, "p99_ratio": statistics.median(ratios) if ratios else None,
            "ping_ms": _pooled(floods), "attempts_per_sec": _median(f["flood"]["attempts_per_sec"] for f in floods),
            "limited": sum(((f["flood"] or {}).get("limited") or 0) + ((f["flood"] or {}).get("turned_away") or 0)
                           for f in floods),
            "checked": sum((f["flood"] or {}).get("checked") or 0 for f in floods),
            "server_cores": _median(f["server_cores"] for f in floods),
        }
    row["idle_server_cores"] = _median(p["server_cores"] for p in idle)
    accepted = sum(((p["flood"] or {}).get("accepted") or 0) for p in phases)
    lost = sum(p.get("lost") or 0 for p in phases)
    if not alive:
        row["status"], row["reason"] = "failed", "server exited"
    elif accepted:
        row["status"], row["reason"] = "failed", f"{accepted} forged tokens were accepted"
    elif lost:
        row["status"], row["reason"] = "partial", f"{lost} pings went unanswered"
    log(f"  ping p99 idle {(row['latency_ms'] or {}).get('p99')} ms; RS256 {rates['rs256']:g}/s: "
        f"p99 {(row['rs256']['ping_ms'] or {}).get('p99')} ms, ÷ idle {row['rs256']['p99_ratios']}; ES256 "
        f"{rates['es256']:g}/s: p99 {(row['es256']['ping_ms'] or {}).get('p99')} ms, ÷ idle {row['es256']['p99_ratios']}")
    return row


def _median(values) -> Optional[float]:
    got = [v for v in values if v is not None]
    return round(statistics.median(got), 3) if got else None


def _pooled(phases: list[dict]) -> Optional[dict]:
    """The median of each percentile over the phases (each phase holds the same number of pings)."""
    got = [p["ping_ms"] for p in phases if p.get("ping_ms")]
    if not got:
        return None
    return {k: _median(g.get(k) for g in got) for k in ("p50", "p90", "p99", "p99_9", "max")} | {
        "count": sum(g.get("count", 0) for g in got)}
