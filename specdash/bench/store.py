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
    path = _free_path(folder, base)
    return write_json_atomic(path, redact_value(result.to_dict()))  # an export: secrets redacted



def _free_path(folder: Path, base: str) -> Path:
    """``folder/base.json``, or ``base-2.json``, ``base-3.json``... when taken (runs stored in the same second)."""
    path = folder / f"{base}.json"
    n = 2
    while path.exists():
        path = folder / f"{base}-{n}.json"
        n += 1
    return path


def save_imported(record, source: str, directory: Path | None = None, now: _dt.datetime | None = None) -> Path:
    """Store an :class:`~specdash.bench.imported.record.ImportedRecord` as
    ``imported-YYYYmmdd-HHMMSS-<source>-L<line>.json`` in the run-file shape (``to_run_dict``, with
    ``settings["source_file"] = source``); return the path. Raises OSError when the folder cannot be written."""
    folder = directory or results_dir()
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = f"imported-{stamp}-{_slug(Path(source).name if source != '-' else 'stdin')}-L{record.line}"
    path = _free_path(folder, base)
    data = record.to_run_dict()
    data["settings"]["source_file"] = source
    return write_json_atomic(path, redact_value(data))


def load_stored(directory: Path | None = None) -> tuple[list[tuple[str, object]], list[str]]:
    """Every stored run and imported record: ``([(id, RunResult | ImportedRecord)], [problems])``, sorted by id
    (the file name without ``.json``; ids start with the time they were stored). A file that is not JSON or not
    one of these shapes is a problem line, never an exception; sweep files are skipped."""
    from specdash.bench.imported.record import ImportedRecord

    folder = directory or results_dir()
    items: list[tuple[str, object]] = []
    problems: list[str] = []
    try:
        paths_ = sorted(folder.glob("*.json"))
    except OSError as exc:
        return [], [f"{folder}: {exc.strerror or exc}"]
    for path in paths_:
        if not path.name.startswith(("run-", "imported-")):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            item: object = (ImportedRecord.from_run_dict(data) if path.name.startswith("imported-")
                            else RunResult.from_dict(data))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            problems.append(f"{path.name}: not readable ({type(exc).__name__})")
            continue
        items.append((path.stem, item))
    return items, problems


def find_stored(run_id: str, directory: Path | None = None) -> object | None:
    """The stored run or imported record whose id (file stem) is ``run_id`` (or ends the only match), else None."""
    items, _ = load_stored(directory)
    exact = [obj for name, obj in items if name == run_id or name + ".json" == run_id]
    if exact:
        return exact[0]
    loose = [obj for name, obj in items if run_id and run_id in name]
    return loose[0] if len(loose) == 1 else None
