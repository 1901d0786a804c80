#!/usr/bin/env python3
"""The code's shape, as issue 24 set it: no Swift file in Sources over MAX_FILE lines and no
function (func, init, closure-free body of a computed property is not counted) over MAX_FUNC
lines. Prints what is over and exits 1 when anything is (the lint stage of scripts/test);
`--report` prints without failing.
Counting is by braces after a `func`/`init`/`deinit` line, skipping strings and comments, which
is all Swift's syntax needs here (no macros or regex literals in Sources)."""
import pathlib
import re
import sys

MAX_FILE, MAX_FUNC = 400, 80
DECL = re.compile(r'^\s*(?:@[\w()\s,:."]+\s+)*(?:(?:public|internal|private|fileprivate|package|'
                  r'static|final|override|mutating|nonisolated|convenience|required|@\w+)\s+)*'
                  r'(func\s+[^\s(<]+|init[?!]?\s*[(<]|deinit\b)')

def strip(line, state):
    """The line without string contents and comments; state carries a block comment."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out)
            state['block'], i = False, j + 2; continue
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'], i = True, i + 2; continue
        if line.startswith('"""', i):
            state['multi'] = not state['multi']; i += 3; continue
        if state['multi']: i += 1; continue
        if line[i] == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == '\\' else 1
            i = j + 1; out.append('""'); continue
        out.append(line[i]); i += 1
    return ''.join(out)

def functions(path):
    lines = path.read_text().splitlines()
    state = {'block': False, 'multi': False}
    clean = [strip(l, state) for l in lines]
    for start, text in enumerate(clean):
        m = DECL.match(text)
        if not m: continue
        depth, opened = 0, False
        for k in range(start, len(clean)):
            # a protocol requirement ends without a body
            if not opened and k > start and DECL.match(clean[k]): break
            for ch in clean[k]:
                if ch == '{': depth += 1; opened = True
                elif ch == '}': depth -= 1
            if opened and depth <= 0:
                yield m.group(1).strip('(< '), start + 1, k - start + 1
                break

def main():
    root = pathlib.Path(__file__).resolve().parents[2] / 'Sources'
    over = []
    for path in sorted(root.rglob('*.swift')):
        rel = path.relative_to(root.parent)
        n = len(path.read_text().splitlines())
        if n > MAX_FILE: over.append(f'{rel}: {n} lines (file, max {MAX_FILE})')
        for name, line, length in functions(path):
            if length > MAX_FUNC: over.append(f'{rel}:{line}: {name} {length} lines (max {MAX_FUNC})')
    print('\n'.join(over) if over else 'shape: every file and function within bounds')
    return 1 if over and '--report' not in sys.argv else 0

sys.exit(main())
