"""Getting what the benchmark needs: Debian packages, release binaries, Yjs updates."""
from __future__ import annotations

import os
import subprocess
import time
from typing import Optional

from . import ROOT, log

SCRATCH = os.path.join(ROOT, ".build-bench")
APT = ["apt-get", "-o", "DPkg::Lock::Timeout=300"]
NODE_PATH = "/usr/share/nodejs"
_apt_updated = False


def installed(package: str) -> bool:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                       capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def ensure_packages(packages: list[str], allow_install: bool) -> Optional[str]:
    """Installs what is missing; returns None when all are there, else why not."""
    global _apt_updated
    missing = [p for p in packages if not installed(p)]
    if not missing:
        return None
    if not allow_install:
        return f"not installed: {' '.join(missing)} (--no-install)"
    if os.geteuid() != 0:
        return f"not installed: {' '.join(missing)} (installing needs root)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for attempt in range(2):
        log(f"installing {' '.join(missing)} from Debian")
        r = subprocess.run(APT + ["install", "-y", "--no-install-recommends", *missing],
                           capture_output=True, text=True, env=env)
        if r.returncode == 0 and all(installed(p) for p in missing):
            return None
        if attempt == 0 and not _apt_updated:
            _apt_updated = True
            subprocess.run(APT + ["update"], capture_output=True, text=True, env=env)
            continue
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
        return f"apt-get install {' '.join(missing)} failed: {tail[0]}"
    return "apt-get install failed"


# The C tools: one folder of sources each, so "built after its last edit" is easy to tell.
C_TOOLS = ("panes-load", "panes-raw-broadcast")


def _fresh(product: str) -> bool:
    """A C tool's binary is newer than its sources and Package.swift (swift build would do nothing)."""
    if product not in C_TOOLS or not os.path.exists(binary(product)):
        return False
    folder = os.path.join(ROOT, "Sources", product)
    sources = [os.path.join(folder, f) for f in os.listdir(folder)] + [os.path.join(ROOT, "Package.swift")]
    return os.path.getmtime(binary(product)) > max(os.path.getmtime(f) for f in sources)


def build_products(products: list[str]) -> dict[str, Optional[str]]:
    """`swift build -c release` each product into .build-bench; product -> error or None."""
    out = {}
    for product in products:
        if _fresh(product):
            out[product] = None
            continue
        log(f"building {product} (release, {os.path.relpath(SCRATCH, ROOT)})")
        for _attempt in range(3):
            r = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", SCRATCH,
                                "--product", product], cwd=ROOT, capture_output=True, text=True)
            # Someone saving a file mid-build is not a failure of the code: build again.
            if r.returncode == 0 or "modified during the build" not in r.stdout + r.stderr:
                break
            time.sleep(10)
        if r.returncode != 0:
            lines = [l for l in (r.stdout + r.stderr).splitlines() if "error" in l.lower()]
            out[product] = f"build failed: {(lines or ['see swift build output'])[0][:200]}"
        else:
            out[product] = None
    return out


def binary(product: str) -> str:
    return os.path.join(SCRATCH, "release", product)


def make_yjs_updates(path: str, count: int, chars: int) -> Optional[str]:
    """Writes `count` prepared y-websocket update messages; returns an error or None."""
    r = subprocess.run(["node", os.path.join(ROOT, "bench", "yjs-updates.js"), str(count),
                        str(chars), path], capture_output=True, text=True,
                       env=dict(os.environ, NODE_PATH=NODE_PATH))
    if r.returncode != 0:
        return f"yjs-updates.js failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def make_yjs_editor_updates(path: str, editors: int, per_editor: int) -> Optional[str]:
    """docs: each of `editors` editors' own `per_editor` one-character updates; an error or None."""
    r = subprocess.run(["node", os.path.join(ROOT, "scripts", "bench_lib", "yjs_editors.js"), str(editors),
                        str(per_editor), path], capture_output=True, text=True,
                       env=dict(os.environ, NODE_PATH=NODE_PATH))
    if r.returncode != 0:
        return f"yjs_editors.js failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def versions() -> dict:
    """Versions of what is measured, for the record."""
    def pkg(name):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True)
        return r.stdout.strip() or None
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {
        "panes_git": rev.stdout.strip() or None,
        "libwebsockets": pkg("libwebsockets17"),
        "nginx": pkg("nginx-light"),
        "nchan": pkg("libnginx-mod-nchan"),
        "node": pkg("nodejs"),
        "y_websocket": pkg("node-y-websocket"),
        "yjs": pkg("node-yjs"),
        "ws": pkg("node-ws"),
    }
