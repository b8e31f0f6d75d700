"""What a fresh interpreter imports: for tests that pin a front end's start-up (the
terminal loads no HTTP client, no store, no chart library)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules_loaded(code: str, watched: tuple[str, ...]) -> list[str]:
    """The modules of ``watched`` (a package counts with its submodules) that a fresh
    interpreter has imported after running ``code`` in the repository root, sorted."""
    report = (
        "\nimport json as _json, sys as _sys\n"
        f"_watched = {watched!r}\n"
        "print(_json.dumps(sorted({m for m in _sys.modules for w in _watched"
        " if m == w or m.startswith(w + '.')})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code + report], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded
