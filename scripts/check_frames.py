#!/usr/bin/env python3
"""Checks every frame the tests captured against PROTOCOL.schema.json.

Usage: scripts/check_frames.py [--schema FILE] STAGE=FOLDER ...

Each FOLDER holds the JSON-lines files a test stage wrote while PANES_FRAME_LOG pointed at it
(one line per text message: direction, connection, test, text). For each connection, in order:

- every frame from the server must be a reply or an event of the schema; a successful reply's
  `result` is checked against the result of the request type its `re` names (the request is
  found among the frames the same connection sent);
- every frame a client sent that is a JSON object with a known `type` must be a request of the
  schema, unless the server refused it with a `fix` error (1000-1999) or `rate_limited`, or
  never answered it (the connection closed): tests send invalid requests on purpose, and the
  server agreeing that they are invalid is what they check. A frame the schema rejects that
  the server accepted is a disagreement, and fails;
- frames sent that are not JSON, not an object, or name no known type are counted as
  intentionally invalid.

A stage with no frames at all fails: capture must not break silently. Exit status 1 on any
failure, with the test, the frame and the schema's complaint for each.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

try:
    import jsonschema
    from jsonschema.exceptions import best_match
except ImportError:  # pragma: no cover
    sys.exit("check_frames.py needs the `jsonschema` package (scripts/test installs it from PyPI)")

ROOT = Path(__file__).resolve().parents[1]
MAX_SHOWN = 25


class Schema:
    """Validators for the schema's definitions, made on first use."""

    def __init__(self, path: Path):
        self.root = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(self.root)
        self.requests = set(self.root["$defs"]["requests"]["$defs"])
        self.results = set(self.root["$defs"]["results"]["$defs"])
        self.events = set(self.root["$defs"]["events"]["$defs"])
        self.codes = {entry["properties"]["code"]["const"]: (entry["properties"]["number"]["const"],
                                                            entry["properties"]["action"]["const"])
                      for entry in self.root["$defs"]["errorCode"]["oneOf"]}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    def errors(self, definition: str, value) -> list[str]:
        """What is wrong with `value` as `#/$defs/<definition>`, most relevant first; empty if valid."""
        validator = self._validators.get(definition)
        if validator is None:
            wrapper = {k: v for k, v in self.root.items() if k != "oneOf"}
            wrapper["$ref"] = "#/$defs/" + definition
            validator = self._validators[definition] = jsonschema.Draft202012Validator(wrapper)
        found = list(validator.iter_errors(value))
        if not found:
            return []
        best = best_match(found)
        lines = [f"at {best.json_path}: {best.message[:400]}"]
        for error in found:
            if error is not best and len(lines) < 3:
                lines.append(f"at {error.json_path}: {error.message[:200]}")
        return lines


class Stage:
    def __init__(self, name: str, folder: Path):
        self.name = name
        self.folder = folder
        self.counts = collections.Counter()
        # Which parts of the schema the frames exercised: `request:edit`, `event:presence`, `error:forbidden`.
        self.seen: set[str] = set()
        self.failures: list[str] = []

    def fail(self, line: dict, why: str, details: list[str] | None = None) -> None:
        text = line.get("text", "")
        shown = text if len(text) <= 300 else text[:300] + f"… ({len(text)} characters)"
        report = [f"[{self.name}] {why}", f"  test: {line.get('test')}", f"  connection: {line.get('connection')}",
                  f"  {line.get('direction')}: {shown}"]
        report += [f"  schema: {d}" for d in details or []]
        self.failures.append("\n".join(report))


def parse(text: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def check_stage(stage: Stage, schema: Schema) -> None:
    lines = []
    for path in sorted(stage.folder.glob("*.jsonl")):
        for raw in path.read_text(errors="replace").splitlines():
            if raw.strip():
                lines.append(json.loads(raw))
    if not lines:
        stage.failures.append(f"[{stage.name}] no frames were captured in {stage.folder}: the capture is broken")
        return
    # Requests sent and not yet answered, per connection and request id: (type, schema errors, line).
    pending: dict[str, dict[str, collections.deque]] = collections.defaultdict(lambda: collections.defaultdict(collections.deque))
    for line in lines:
        connection = line.get("connection", "?")
        message = parse(line["text"])
        if line["direction"] == "sent":
            if not isinstance(message, dict):
                stage.counts["sent: not a JSON object (intentionally invalid)"] += 1
                continue
            kind = message.get("type")
            if kind not in schema.requests:
                stage.counts["sent: no known request type (intentionally invalid)"] += 1
                continue
            problems = schema.errors(f"requests/$defs/{kind}", message)
            key = json.dumps(message.get("id"))
            pending[connection][key].append((kind, problems, line))
            if not problems:
                stage.counts["sent: requests validated"] += 1
                stage.seen.add(f"request:{kind}")
            continue

        # From the server: every frame must validate.
        if not isinstance(message, dict):
            stage.fail(line, "the server sent a frame that is not a JSON object")
            continue
        kind = message.get("type")
        if kind == "reply":
            waiting = pending[connection].get(json.dumps(message.get("re")))
            request = waiting.popleft() if waiting else None
            if request and request[1]:
                # The schema rejected the request: the server must have refused it too.
                code = (message.get("error") or {}).get("number", 0) if message.get("ok") is False else 0
                if 1000 <= code < 2000 or code == 4000:
                    stage.counts["sent: invalid requests the server refused (intentionally invalid)"] += 1
                else:
                    stage.fail(request[2], f"the schema rejects this `{request[0]}` request, but the server answered "
                                           f"it with {'success' if message.get('ok') else message.get('error', {}).get('code')}",
                               request[1])
            if message.get("ok") is True:
                problems = schema.errors("reply", {**message, "result": {}}) if request else schema.errors("reply", message)
                if request and not problems:
                    problems = schema.errors(f"results/$defs/{request[0]}", message.get("result"))
                what = f"result of `{request[0]}`" if request else "reply (to a request not captured)"
                if problems:
                    stage.fail(line, f"the server's {what} does not match the schema", problems)
                else:
                    stage.counts["received: replies validated"] += 1
                    if request:
                        stage.seen.add(f"result:{request[0]}")
            else:
                problems = schema.errors("errorReply", message)
                code = (message.get("error") or {}).get("code") if isinstance(message.get("error"), dict) else None
                if problems and code in schema.codes:
                    number, action = schema.codes[code]
                    problems.append(f"the schema gives `{code}` the number {number} and the action `{action}`")
                elif problems:
                    problems.append(f"`{code}` is not an error code of the schema")
                if problems:
                    stage.fail(line, "the server's error reply does not match the schema", problems)
                else:
                    stage.counts["received: error replies validated"] += 1
                    stage.seen.add(f"error:{code}")
        elif kind in schema.events:
            problems = schema.errors(f"events/$defs/{kind}", message)
            if problems:
                stage.fail(line, f"the server's `{kind}` event does not match the schema", problems)
            else:
                stage.counts["received: events validated"] += 1
                stage.seen.add(f"event:{kind}")
        else:
            stage.fail(line, f"the server sent a message of unknown type {kind!r}")
    # Requests never answered (the connection ended first, e.g. on a message too big).
    for by_id in pending.values():
        for waiting in by_id.values():
            for _kind, problems, _line in waiting:
                if problems:
                    stage.counts["sent: invalid requests never answered (intentionally invalid)"] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema", type=Path, default=ROOT / "PROTOCOL.schema.json")
    parser.add_argument("stages", nargs="+", metavar="STAGE=FOLDER")
    arguments = parser.parse_args()
    schema = Schema(arguments.schema)
    failed = False
    seen: set[str] = set()
    for spec in arguments.stages:
        name, _, folder = spec.partition("=")
        stage = Stage(name, Path(folder))
        check_stage(stage, schema)
        seen |= stage.seen
        validated = sum(n for label, n in stage.counts.items() if "validated" in label)
        invalid = sum(n for label, n in stage.counts.items() if "intentionally invalid" in label)
        print(f"==> frames of {name}: {validated} validated against {arguments.schema.name}, "
              f"{invalid} sent intentionally invalid, {len(stage.failures)} failures")
        for label, count in sorted(stage.counts.items()):
            print(f"    {count:7d}  {label}")
        if stage.failures:
            failed = True
            for failure in stage.failures[:MAX_SHOWN]:
                print(failure, file=sys.stderr)
            if len(stage.failures) > MAX_SHOWN:
                print(f"[{name}] … and {len(stage.failures) - MAX_SHOWN} more failures", file=sys.stderr)
    unseen = [f"result:{k}" for k in sorted(schema.results)] + [f"event:{k}" for k in sorted(schema.events)] \
        + [f"error:{k}" for k in sorted(schema.codes)]
    unseen = [name for name in unseen if name not in seen]
    if unseen:
        print(f"    (no frame exercised: {', '.join(unseen)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
