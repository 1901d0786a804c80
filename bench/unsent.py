#!/usr/bin/env python3
"""Issue 25's measurements (a benchmark, never a test): what keeping unsent edits and undo
costs, and what a catch-up by difference costs.

    python3 bench/unsent.py --base /work/bin/panes-base-27a3a7b --new .build/release/panes

0. Server instructions per edit (callgrind, user space): one editor, 1,000 edits one at a time,
   less a run with none; base and new binary. Repeatable on a busy machine.
1. Server CPU per edit: 20 editors each typing into one document (10 KB), one edit at a time,
   for `--seconds`; utime+stime of the server during the typing over the edits acknowledged.
   The base binary and the new one alternate, `--rounds` times each, on a SQLite store.
2. Server time of a catch-up past the log: a 1 MB document, 10,000 edits at 50 places, then
   `openDocument` from revision 0 (the log no longer reaches it: the new binary is run with
   `operationLogRetentionMs: 0`, else it would catch up by operations), answered with the whole
   text (and `applied` for the pending op id on the new binary); the median of 15 replies, from
   sending to the reply parsed. The same with the new binary's defaults (a catch-up by
   operations) for comparison.
3. Client, in Chromium (Playwright, Debian's chromium) and in Node: the rebase by difference of
   those texts (`diffOperation`, then `transform` of a few pending edits, then `apply`), and the
   cost of keeping a window's edits per keystroke: `applyLocal` with an `IndexedDBPendingStore`
   against a `MemoryPendingStore`, in a 10 KB and a 1 MB document (synchronous time per call,
   and the time until IndexedDB has committed the last write), the IndexedDB write alone, and
   `applyLocal` of today's client (`--base-web`, main's web/) against this one, alternating.

Prints one table; `--json FILE` writes the figures.
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CHROMIUM = os.environ.get("PANES_CHROMIUM", "/usr/bin/chromium")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Server:
    def __init__(self, binary: str, settings: dict | None = None, web: str | None = None):
        self.data = tempfile.mkdtemp(prefix="panes-unsent-bench-")
        args = [binary, "serve", "--port", "0", "--data", self.data, "--log-level", "error", "--web", web or str(ROOT / "web")]
        if settings:
            config = Path(self.data) / "config.json"
            config.write_text(json.dumps({"settings": settings}))
            args += ["--config", str(config)]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        banner = self.process.stdout.readline()
        self.port = int(re.search(r"listening on http://[\d.]+:(\d+)", banner).group(1))
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=15)


class Client:
    def __init__(self, server: Server, workspace: str, name: str):
        self.ws = connect(server.url, subprotocols=["panes.v1"], max_size=64 << 20, ping_interval=None)
        self.ids = 0
        self.ask("connect", protocol=1, workspace=workspace, auth={"name": name})

    def ask(self, type: str, **fields):
        self.ids += 1
        self.ws.send(json.dumps({"type": type, "id": self.ids, **fields}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message["type"] == "reply" and message["re"] == self.ids:
                if not message["ok"]:
                    raise RuntimeError(message["error"])
                return message["result"]


def per_edit_cpu(binary: str, seconds: float, editors: int = 20) -> float:
    server = Server(binary, {"rateLimitPerSecond": 100000, "rateLimitBurst": 100000})
    try:
        workspace = f"bench{random.randrange(1 << 30)}"
        clients = [Client(server, workspace, f"e{i}") for i in range(editors)]
        document = clients[0].ask("createDocument", title="Bench", text="x" * 10_000)["document"]["id"]
        for c in clients:
            c.ask("openDocument", document=document)
        counts = [0] * editors
        stop = time.monotonic() + seconds

        def type_(i: int) -> None:
            c = clients[i]
            revision, length, n = 0, 10_000, 0
            while time.monotonic() < stop:
                n += 1
                # Made on the revision last acknowledged: the server rebases it past the others'.
                at = random.randrange(length + 1)
                op = [x for x in (at, "a", length - at) if x != 0]
                c.ids += 1
                c.ws.send(json.dumps({"type": "edit", "id": c.ids, "document": document, "revision": revision,
                                      "operation": op, "opId": f"{i}:{n}"}))
                while True:
                    m = json.loads(c.ws.recv(timeout=60))
                    if m["type"] == "documentOperation":
                        revision = m["revision"]
                        length += sum(len(x) if isinstance(x, str) else (x if x < 0 else 0) for x in m["operation"])
                    elif m["type"] == "reply" and m["re"] == c.ids:
                        revision, length = m["result"]["revision"], length + 1
                        break
                counts[i] += 1

        before = cpu_seconds(server.process.pid)
        threads = [threading.Thread(target=type_, args=(i,)) for i in range(editors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        used = cpu_seconds(server.process.pid) - before
        for c in clients:
            c.ws.close()
        return used / max(1, sum(counts)) * 1e6  # µs per edit
    finally:
        server.stop()


def callgrind_per_edit(binary: str, edits: int = 1000) -> float:
    """Instructions the server executes per edit (user space, callgrind): one editor typing
    `edits` edits one at a time into a 10 KB document, less the same run with none. Repeatable
    whatever else the machine runs."""
    totals = []
    for n in (0, edits):
        out = tempfile.mktemp(prefix="callgrind-unsent-")
        data = tempfile.mkdtemp(prefix="panes-unsent-cg-")
        process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve", "--port", "0",
             "--data", data, "--log-level", "error"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        port = int(re.search(r"listening on http://[\d.]+:(\d+)", process.stdout.readline()).group(1))
        threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()

        class Running:
            url = f"ws://127.0.0.1:{port}/ws"

        c = Client(Running, "cg", "editor")
        document = c.ask("createDocument", title="Bench", text="x" * 10_000)["document"]["id"]
        c.ask("openDocument", document=document)
        for i in range(n):
            at = i * 7 % 10_000 + 1
            c.ask("edit", document=document, revision=i, operation=[at, "a", 10_000 + i - at], opId=f"e:{i + 1}")
        c.ws.close()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
        with open(out) as f:
            totals.append(next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:"))))
        os.unlink(out)
    return (totals[1] - totals[0]) / edits


def texts(size: int = 1_000_000, edits: int = 10_000, sites: int = 50, seed: int = 25):
    rng = random.Random(seed)
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(10)) + "\n"
        lines.append(line)
        total += len(line)
    base = "".join(lines)[:size]
    places = sorted(rng.randrange(len(base)) for _ in range(sites))
    # 10,000 single-character inserts spread over the places, as typing at 50 carets.
    pieces, last = [], 0
    per = edits // sites
    for p in places:
        pieces.append(base[last:p])
        pieces.append("".join(rng.choice("abcdefghij ") for _ in range(per)))
        last = p
    pieces.append(base[last:])
    return base, "".join(pieces), places


def catch_up_ms(binary: str, settings: dict | None, base: str, places: list[int], pending: bool) -> tuple[float, str]:
    server = Server(binary, {"rateLimitPerSecond": 100000, "rateLimitBurst": 100000, "maxDocumentScalars": 4 << 20,
                             "maxMessageBytes": 8 << 20, **(settings or {})})
    try:
        workspace = f"bench{random.randrange(1 << 30)}"
        writer = Client(server, workspace, "writer")
        document = writer.ask("createDocument", title="Big", text=base)["document"]["id"]
        writer.ask("openDocument", document=document)
        # 10,000 edits at 50 places, pipelined 200 at a time on the revision last acknowledged.
        revision, length, sent = 0, len(base), 0
        offsets = list(places)
        while sent < 10_000:
            batch = []
            for k in range(200):
                site = (sent + k) % len(offsets)
                at = offsets[site] + (sent + k) // len(offsets)
                writer.ids += 1
                batch.append(writer.ids)
                writer.ws.send(json.dumps({"type": "edit", "id": writer.ids, "document": document, "revision": revision,
                                           "operation": [x for x in (at, "q", length - at) if x != 0],
                                           "opId": f"w:{sent + k}"}))
            waiting = set(batch)
            while waiting:
                m = json.loads(writer.ws.recv(timeout=60))
                if m["type"] == "reply" and m["re"] in waiting:
                    waiting.discard(m["re"])
                    revision = max(revision, m["result"]["revision"])
            sent += 200
            length += 200
        reader = Client(server, workspace, "reader")
        times, kind = [], ""
        for _ in range(15):
            fields = {"document": document, "revision": 0}
            if pending:
                fields["pending"] = ["reader.page1:1", "reader.page1:2"]
            start = time.perf_counter()
            result = reader.ask("openDocument", **fields)
            times.append((time.perf_counter() - start) * 1000)
            kind = result.get("catchUp", "")
        writer.ws.close()
        reader.ws.close()
        return statistics.median(times), kind
    finally:
        server.stop()


CLIENT_BENCH = """async ({ base, after, n }) => {
  const { diffOperation } = await import('/lib/text-diff.js');
  const ot = await import('/lib/ot.js');
  const times = [];
  const pending = [0, 'typed offline ', ot.codePointLength(base)];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const difference = diffOperation(base, after);
    const [mine, past] = ot.transform(pending, difference);
    const local = ot.apply(ot.apply(base, pending), past);
    times.push(performance.now() - t0);
    if (local.length !== after.length + 14) throw new Error('wrong result');
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}"""

STORE_BENCH = """async ({ size, n }) => {
  const lib = await import('/panes-client.js');
  const results = {};
  for (const kind of ['memory', 'indexedDB']) {
    const pendingStore = kind === 'memory' ? new lib.MemoryPendingStore() : new lib.IndexedDBPendingStore({ name: 'panes-bench-' + size });
    const client = new lib.PanesClient({ url: lib.socketURL(), workspace: 'bench' + Math.random(), auth: { name: 'bench' }, pendingStore });
    await client.start();
    const summary = await client.createDocument('Bench', { text: 'x'.repeat(size) });
    const doc = await client.openDocument(summary.id);
    const length = () => doc.text.length;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const at = (i * 7919) % (length() + 1);
      doc.applyLocal([at, 'a', length() - at].filter((c) => c !== 0));
    }
    const sync = (performance.now() - t0) / n;
    // The last write is committed once a read after it returns.
    if (kind === 'indexedDB') await pendingStore.load({ session: client.session.persistentIdentifier, document: summary.id });
    const drained = (performance.now() - t0) / n;
    await doc.whenSaved();
    results[kind] = { syncMs: sync, drainedMs: drained };
    client.close();
  }
  // The write alone: `save` of a typing window's record (two pending operations, 50 undo
  // steps), the text written once and then only the rest, as a window typing does.
  const store = new lib.IndexedDBPendingStore({ name: 'panes-bench-save-' + size });
  const key = { session: 'bench', document: 'doc' + size };
  const steps = Array.from({ length: 50 }, (_, i) => ({ op: [i, -5, size], kind: 'insert', caret: i, space: false, at: 0 }));
  const record = (i) => ({ version: 1, session: 'bench', document: key.document, revision: 7, base: { revision: 7, text: 'x'.repeat(size) },
    since: null, pending: [{ op: [i, 'a', size], opId: 'b:1' }, { op: [i + 1, 'b', size + 1], opId: 'b:2' }],
    history: { undo: steps, redo: [] }, savedAt: Date.now() });
  store.save(key, record(0));
  await store.load(key);
  const t1 = performance.now();
  for (let i = 0; i < n; i++) store.save(key, record(i));
  const saveSync = (performance.now() - t1) / n;
  await store.load(key);
  results.save = { syncMs: saveSync, drainedMs: (performance.now() - t1) / n };
  store.remove(key);
  return results;
}"""


APPLY_BENCH = """async ({ size, n, store }) => {
  const lib = await import('/panes-client.js');
  const options = { url: lib.socketURL(), workspace: 'b' + Math.random(), auth: { name: 'bench' } };
  if (store) options.pendingStore = new lib.IndexedDBPendingStore({ name: 'panes-bench-apply-' + Math.random() });
  const client = new lib.PanesClient(options);
  await client.start();
  const summary = await client.createDocument('Bench', { text: 'x'.repeat(size) });
  const doc = await client.openDocument(summary.id);
  const times = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      // Typing at one place, a space every sixth key, as a person types.
      const len = doc.text.length;
      const at = Math.min(len, 1000 + r * n + i);
      doc.applyLocal([at, i % 6 === 5 ? ' ' : 'a', len - at].filter((c) => c !== 0));
    }
    times.push((performance.now() - t0) / n * 1000);
    await doc.whenSaved();
  }
  client.close();
  times.sort((a, b) => a - b);
  return times[2];
}"""


def apply_local_figures(binary: str, base_web: str) -> dict:
    """µs per `applyLocal` (typing at one place), today's client (`base_web`) against this one
    with an IndexedDB pending store, alternating, in Chromium."""
    from playwright.sync_api import sync_playwright

    figures: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
        for size in (10_000, 1_000_000):
            for _ in range(2):
                for name, web, store in (("base client", base_web, False), ("new client, IndexedDB", str(ROOT / "web"), True)):
                    server = Server(binary, {"maxMessageBytes": 8 << 20, "maxDocumentScalars": 4 << 20,
                                             "rateLimitPerSecond": 100000, "rateLimitBurst": 100000}, web=web)
                    try:
                        page = browser.new_page()
                        page.goto(f"http://127.0.0.1:{server.port}/?workspace=bench")
                        us = page.evaluate(APPLY_BENCH, {"size": size, "n": 60 if size > 100_000 else 300, "store": store})
                        figures.setdefault(f"{size}", {}).setdefault(name, []).append(us)
                        page.close()
                    finally:
                        server.stop()
        browser.close()
    return figures


def chromium_figures(new_binary: str, base: str, after: str) -> dict:
    from playwright.sync_api import sync_playwright

    server = Server(new_binary, {"maxDocumentScalars": 4 << 20, "maxMessageBytes": 16 << 20})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.port}/?workspace=bench")
            page.wait_for_function("() => document.querySelector('#app')?.dataset.ready === 'true'")
            rebase = page.evaluate(CLIENT_BENCH, {"base": base, "after": after, "n": 7})
            small = page.evaluate(STORE_BENCH, {"size": 10_000, "n": 500})
            large = page.evaluate(STORE_BENCH, {"size": 1 << 20, "n": 200})
            browser.close()
        return {"rebase_ms": rebase, "store_10k": small, "store_1m": large}
    finally:
        server.stop()


def node_rebase_ms(base: str, after: str) -> float:
    script = f"""
      const {{ diffOperation }} = await import('{ROOT}/web/lib/text-diff.js');
      const ot = await import('{ROOT}/web/lib/ot.js');
      const [base, after] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      const times = [];
      const pending = [0, 'typed offline ', ot.codePointLength(base)];
      for (let i = 0; i < 7; i++) {{
        const t0 = performance.now();
        const d = diffOperation(base, after);
        const [, past] = ot.transform(pending, d);
        ot.apply(ot.apply(base, pending), past);
        times.push(performance.now() - t0);
      }}
      times.sort((a, b) => a - b);
      console.log(times[3]);
    """
    out = subprocess.run(["node", "--input-type=commonjs", "-e", f"(async () => {{ {script} }})()"],
                         input=json.dumps([base, after]), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="/work/bin/panes-base-27a3a7b")
    parser.add_argument("--new", default=str(ROOT / ".build/release/panes"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--base-web", default="/work/main/web", help="today's client, for applyLocal's cost")
    parser.add_argument("--json")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: callgrind, edits, catchup, client")
    args = parser.parse_args()
    figures: dict = {"per_edit_us": {"base": [], "new": []}}

    skip = set(filter(None, args.skip.split(",")))
    if "callgrind" not in skip:
        figures["instructions_per_edit"] = {name: callgrind_per_edit(binary) for name, binary in (("base", args.base), ("new", args.new))}
        print(f"instructions per edit: {figures['instructions_per_edit']}", file=sys.stderr)
    for _ in range(0 if "edits" in skip else args.rounds):
        for name, binary in (("base", args.base), ("new", args.new)):
            figures["per_edit_us"][name].append(per_edit_cpu(binary, args.seconds))
            print(f"per edit, {name}: {figures['per_edit_us'][name][-1]:.1f} µs", file=sys.stderr)
    base, after, places = texts()
    figures["catch_up_ms"] = {}
    for _ in range(0 if "catchup" in skip else 2):
        for name, binary, settings, pending in (
            ("base", args.base, None, False),
            ("new, past the log (by difference)", args.new, {"operationLogRetentionMs": 0}, True),
            ("new, defaults", args.new, None, True),
        ):
            ms, kind = catch_up_ms(binary, settings, base, places, pending)
            figures["catch_up_ms"].setdefault(name, []).append(ms)
            figures.setdefault("catch_up_kind", {})[name] = kind
            print(f"catch-up, {name}: {ms:.1f} ms ({kind})", file=sys.stderr)
    if "client" not in skip:
        figures["node_rebase_ms"] = node_rebase_ms(base, after)
        figures["chromium"] = chromium_figures(args.new, base, after)
        figures["apply_local_us"] = apply_local_figures(args.new, args.base_web)

    per = figures["per_edit_us"]
    ratios = [n / b for n, b in zip(per["new"], per["base"])]
    print("\n| measure | figure |\n|---|---|")
    if "instructions_per_edit" in figures:
        ipe = figures["instructions_per_edit"]
        print(f"| server instructions per edit (callgrind), base / new | {ipe['base']:,.0f} / {ipe['new']:,.0f} "
              f"({ipe['new'] / ipe['base']:.3f}×) |")
    if ratios:
        print(f"| server CPU per edit, base (µs, each round) | {', '.join(f'{x:.1f}' for x in per['base'])} |")
        print(f"| server CPU per edit, new (µs, each round) | {', '.join(f'{x:.1f}' for x in per['new'])} |")
        print(f"| new / base, each round | {', '.join(f'{r:.2f}' for r in ratios)} |")
    for name, values in figures["catch_up_ms"].items():
        print(f"| 1 MB document, 10,000 missed edits: openDocument reply, {name} "
              f"({figures['catch_up_kind'][name]}) | {', '.join(f'{v:.1f}' for v in values)} ms |")
    if "client" in skip:
        return 0
    print(f"| client rebase by difference (diff + transform + apply), Node | {figures['node_rebase_ms']:.1f} ms |")
    ch = figures["chromium"]
    print(f"| client rebase by difference, Chromium | {ch['rebase_ms']:.1f} ms |")
    for size in ("10k", "1m"):
        s = ch[f"store_{size}"]
        print(f"| applyLocal, {size} document, memory store: per call | {s['memory']['syncMs'] * 1000:.0f} µs |")
        print(f"| applyLocal, {size} document, IndexedDB store: per call / until committed | "
              f"{s['indexedDB']['syncMs'] * 1000:.0f} µs / {s['indexedDB']['drainedMs'] * 1000:.0f} µs |")
        print(f"| the IndexedDB write alone, {size} document: per save / until committed | "
              f"{s['save']['syncMs'] * 1000:.0f} µs / {s['save']['drainedMs'] * 1000:.0f} µs |")
    for size, by_client in figures["apply_local_us"].items():
        for name, values in by_client.items():
            print(f"| applyLocal in Chromium, typing into a {int(size):,}-scalar document, {name} | "
                  f"{', '.join(f'{v:.0f}' for v in values)} µs |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
