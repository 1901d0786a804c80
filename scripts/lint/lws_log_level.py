#!/usr/bin/env python3
"""lws's log levels are set only through CLibWebSocketsLog's `pws_set_log_level`: its `_lws_log`
filters on a copy of the levels it set, so a direct `lws_set_log_level(` call would turn lines on
in lws that the copy keeps off (Sources/CLibWebSocketsLog/lws_log.c). Fails (exit 1) on such a
call in a C, header or Swift file outside Sources/CLibWebSocketsLog and
Sources/panes-raw-broadcast (raw lws without Panes' transport, the benchmark's baseline). Run by
the lint stage of scripts/test. Tests/CLibWebSocketsLogTestSupport may call it too: its test
widens lws's levels past the check's to show the check alone drops a line."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALLOWED = ('Sources/CLibWebSocketsLog/', 'Sources/panes-raw-broadcast/', 'Tests/CLibWebSocketsLogTestSupport/')
CALL = re.compile(r'\blws_set_log_level\s*\(')

def main():
    found = []
    for top in ('Sources', 'Tests', 'bench', 'scripts'):
        for path in sorted((ROOT / top).rglob('*')):
            if path.suffix not in ('.c', '.h', '.swift', '.m', '.cc', '.cpp') or not path.is_file():
                continue
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(ALLOWED):
                continue
            for number, line in enumerate(path.read_text(errors='replace').splitlines(), 1):
                if CALL.search(line):
                    found.append(f'{rel}:{number}: lws_set_log_level( outside CLibWebSocketsLog: '
                                 'use pws_set_log_level')
    print('\n'.join(found) if found else 'lws_log_level: lws_set_log_level is called only by CLibWebSocketsLog')
    return 1 if found else 0

sys.exit(main())
