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
            if isinstance(item, RunResult):
                _check_run(item)  # a hand-edited figure: a problem line, not a traceback in list or compare
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            problems.append(f"{path.name}: not readable ({type(exc).__name__})")
            continue
        items.append((path.stem, item))
    return items, problems


#: The keys every run file holds (:meth:`RunResult.to_dict`); an imported record's file holds them too, plus
#: ``"imported"``.
_RUN_KEYS = ("settings", "workload", "effective_config", "started_at", "output_tokens_per_s", "requests")
_STORED_NAME = re.compile(r"(?:run|imported)-[A-Za-z0-9._-]{1,120}")


class ResultFile:
    """A result file that specdash wrote, read by its path (``specdash bench compare PATH``, ``bench import
    PATH``): ``data`` (the JSON object), ``item`` (:class:`RunResult`, or an ImportedRecord for an
    ``imported-*.json``), ``path``."""

    def __init__(self, path: Path, data: dict, item: object) -> None:
        self.path, self.data, self.item = path, data, item


def read_result_file(path: Path) -> ResultFile | None:
    """``path`` as one of specdash's own result files (a ``run-*.json`` saved after a benchmark, or an
    ``imported-*.json``), whatever it is called now; None when it is not that shape (not JSON, another tool's
    output, a sweep checkpoint). Raises OSError when it cannot be read, ValueError (one line) when it has the shape
    of a specdash result but its values cannot be read (a damaged or hand-edited file)."""
    from specdash.bench.imported.record import ImportedRecord

    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not all(key in data for key in _RUN_KEYS):
        return None
    try:
        item: object = (ImportedRecord.from_run_dict(data) if isinstance(data.get("imported"), dict)
                        else RunResult.from_dict(data))
        if isinstance(item, RunResult):
            _check_run(item)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"{path} looks like a specdash benchmark result but cannot be read "
                         f"({type(exc).__name__})") from None
    return ResultFile(path, data, item)


def _check_run(run: RunResult) -> None:
    """Raise TypeError unless the figures of ``run`` have the types specdash wrote (a hand-edited file may not)."""
    def number(value: object, optional: bool = False) -> bool:
        return (optional and value is None) or (isinstance(value, (int, float)) and not isinstance(value, bool))

    ok = (all(number(getattr(run, k)) for k in ("duration_s", "output_tokens_per_s", "requests_per_s",
                                                  "output_rate_se"))
          and all(isinstance(getattr(run, k), int) and not isinstance(getattr(run, k), bool)
                  for k in ("completed", "errors", "total_output_tokens"))
          and number(run.accept_length, optional=True) and isinstance(run.partial, bool)
          and all(isinstance(getattr(run, k), dict) for k in ("settings", "workload", "effective_config"))
          and isinstance(run.accept_length_source, str) and isinstance(run.accept_length_note, str)
          and all(number(getattr(d, k), optional=True) for d in (run.ttft_ms, run.itl_ms, run.tpot_ms, run.e2e_ms)
                  for k in ("count", "mean", "p50", "p90", "p99", "max"))
          and all(isinstance(r.error, str | None) and isinstance(r.partial, bool) for r in run.requests))
    if not ok:
        raise TypeError("a figure of another type")


def stored_copy(result: ResultFile, directory: Path | None = None) -> str | None:
    """The id of the stored result that ``result`` already is: the file itself when it lies in the store, or a
    stored file with the same content (as stored: secrets redacted); None when the store has no copy."""
    folder = directory or results_dir()
    try:
        if result.path.resolve().parent == folder.resolve() and _STORED_NAME.fullmatch(result.path.stem):
            return result.path.stem
        candidates = sorted(folder.glob("*.json"))
    except OSError:
        return None
    wanted = redact_value(result.data)
    for path in candidates:
        if not _STORED_NAME.fullmatch(path.stem):
            continue
        try:
            if json.loads(path.read_text(encoding="utf-8")) in (wanted, result.data):
                return path.stem
        except (OSError, ValueError, RecursionError):
            continue
    return None


def store_result_file(result: ResultFile, directory: Path | None = None) -> Path:
    """Store a copy of ``result`` under its own name when that is a stored-result name and free (its id stays
    the one the other machine printed), else under the next free ``-2``, ``-3``... name (or a new ``run-`` name
    when the file was renamed); strings redacted as :func:`save_run` does. Raises OSError."""
    folder = directory or results_dir()
    stem = result.path.stem
    if not _STORED_NAME.fullmatch(stem):
        kind = "imported" if isinstance(result.data.get("imported"), dict) else "run"
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        stem = f"{kind}-{stamp}-{_slug(stem)}"
    return write_json_atomic(_free_path(folder, stem), redact_value(result.data))


def find_stored(run_id: str, directory: Path | None = None) -> object | None:
    """The stored run or imported record whose id (file stem) is ``run_id`` (or ends the only match), else None."""
    items, _ = load_stored(directory)
    exact = [obj for name, obj in items if name == run_id or name + ".json" == run_id]
    if exact:
        return exact[0]
    loose = [obj for name, obj in items if run_id and run_id in name]
    return loose[0] if len(loose) == 1 else None
