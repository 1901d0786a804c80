"""scripts/bench: Panes measured beside the systems people would pick instead (issue 7)."""
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_T0 = time.monotonic()


def log(message: str) -> None:
    """Progress on stderr, with seconds since start; the table goes to stdout."""
    sys.stderr.write(f"[{time.monotonic() - _T0:6.1f}s] {message}\n")
    sys.stderr.flush()
