"""Keep benchmark results reproducible: JSON files under ``<state dir>/bench/`` (``specdash locate`` shows it).

A run file holds the full :class:`~specdash.bench.results.RunResult` (settings, workload with its prompts, seed,
effective server configuration, raw per-request data). Files are written atomically (temp file + ``os.replace``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import tempfile
from pathlib import Path

from specdash import paths
from specdash.bench.results import RunResult
from specdash.text.redaction import redact_value


def results_dir() -> Path:
    """``<state dir>/bench`` (``SPECDASH_STATE_DIR`` or ``platformdirs.user_state_dir("specdash")``); not created."""
    return paths.bench_results_dir()


def write_json_atomic(path: Path, data: object) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically (parents created, mode 0700). Raises OSError."""
    paths.ensure_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, allow_nan=False, default=str)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:40] or "run"


def save_run(result: RunResult, directory: Path | None = None, now: _dt.datetime | None = None) -> Path:
    """Store ``result`` as ``run-YYYYmmdd-HHMMSS-<workload>.json`` (suffix ``-2``... if taken); return the path.

    ``directory`` defaults to :func:`results_dir`. Strings are redacted (:mod:`specdash.text.redaction`: a
    ``--url`` with a password, an error body echoing a token). Raises OSError when the folder cannot be written.
    """
    folder = directory or results_dir()
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = f"run-{stamp}-{_slug(str(result.settings.get('workload', 'run')))}"
    path = folder / f"{base}.json"
    n = 2
    while path.exists():
        path = folder / f"{base}-{n}.json"
        n += 1
    return write_json_atomic(path, redact_value(result.to_dict()))  # an export: secrets redacted

