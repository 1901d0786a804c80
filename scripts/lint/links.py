#!/usr/bin/env python3
"""Every relative link in the repository's Markdown leads somewhere: the file exists and, for
`file.md#anchor` or `#anchor`, the file has a heading with that anchor (GitHub's rule: lower
case, punctuation dropped, spaces to hyphens). Run by `scripts/test lint`; exits 1 on a broken
link, so moving a section between pages cannot leave a dangling reference behind."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SKIP = {".build", "node_modules", ".git", "bench-results", "test-results"}


def anchors(path: pathlib.Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def main() -> int:
    broken = []
    for page in sorted(ROOT.rglob("*.md")):
        parts = page.relative_to(ROOT).parts
        # Build folders (.build, .build-release, .build-bench, …) hold other projects' pages.
        if SKIP & set(parts) or any(part.startswith(".build") for part in parts):
            continue
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            file, _, anchor = target.partition("#")
            where = (page.parent / file).resolve() if file else page
            if not where.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{page.relative_to(ROOT)}: {target}: no such heading")
    for line in broken:
        print(line)
    print(f"links: {len(broken)} broken" if broken else "links: every relative link in the Markdown resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
