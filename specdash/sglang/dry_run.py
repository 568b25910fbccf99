"""Authoritative dry run: SGLang's *own* argument resolution, run on the host in a subprocess, compared with
specdash's prediction.

The script (:data:`DRY_RUN_SCRIPT`) is sent to the host's python on standard input's first line-free channel:
``<python> -c SCRIPT`` with a JSON request ``{"argv": [...], "env": {...}}`` on stdin. It calls, in the installed
SGLang, ``prepare_server_args(argv)`` and then ``resolve_once()`` + ``resolved_dict()`` (2026 releases, where
construction leaves the record unresolved) or reads the constructed ``ServerArgs`` (older releases, where
``__post_init__`` resolves). No weights are loaded and the GPU is not touched; the model's config.json is read as
SGLang reads it. It prints one line ``SPECDASH-DRY-RUN {json}`` with ``ok``, ``exception``, ``message``,
``version``, ``resolved`` (the fields in :data:`COMPARED_FIELDS`) and ``warnings`` (SGLang's log records of
level WARNING and above, plus argparse's error text).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from typing import Any

MARKER = "SPECDASH-DRY-RUN "

#: Fields compared between specdash's prediction and SGLang's resolution.
COMPARED_FIELDS: tuple[str, ...] = (
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "max_running_requests",
    "disable_overlap_schedule",
    "enable_mixed_chunk",
    "page_size",
    "attention_backend",
)

DRY_RUN_SCRIPT = r'''
import contextlib, io, json, logging, os, sys
FIELDS = %(fields)r
MARKER = %(marker)r
req = json.loads(sys.stdin.read())
os.environ.update(req.get("env") or {})
records = []
class _Keep(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            try:
                records.append(record.getMessage()[:500])
            except Exception:
                pass
# on the "sglang" logger: prepare_server_args calls logging.basicConfig(force=True), which drops root handlers
logging.getLogger("sglang").addHandler(_Keep())
out = {"ok": False, "exception": None, "message": "", "resolved": {}, "warnings": records, "version": None,
       "stage": "import"}
err = io.StringIO()
def plain(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)
try:
    import sglang
    out["version"] = getattr(sglang, "__version__", None)
    from sglang.srt.server_args import prepare_server_args
    out["stage"] = "args"
    with contextlib.redirect_stderr(err):
        args = prepare_server_args(list(req["argv"]))
        if hasattr(args, "resolve_once"):
            args.resolve_once()
            resolved = args.resolved_dict()
        else:
            resolved = vars(args)
    out["ok"] = True
    out["resolved"] = {f: plain(resolved.get(f)) for f in FIELDS}
except SystemExit as exc:
    out["exception"] = "SystemExit"
    lines = [l for l in err.getvalue().splitlines() if "error:" in l]
    out["message"] = (lines[-1] if lines else str(exc))[:800]
except BaseException as exc:
    out["exception"] = type(exc).__name__
    out["message"] = str(exc)[:800]
sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")
''' % {"fields": COMPARED_FIELDS, "marker": MARKER}  # noqa: UP031  (the template's braces are Python code)


def dry_run_command(python: str = "python3") -> str:
    """The shell command that runs :data:`DRY_RUN_SCRIPT` with ``python`` (the request goes on stdin)."""
    return f"{shlex.quote(python)} -c {shlex.quote(DRY_RUN_SCRIPT)}"


def dry_run_request(argv: list[str], env: dict[str, str]) -> str:
    """The JSON request for the script's stdin."""
    return json.dumps({"argv": list(argv), "env": dict(env)})


@dataclasses.dataclass(frozen=True)
class DryRunResult:
    """What SGLang itself decided: ``ok`` (False when it raised), ``exception`` (type name), ``message``,
    ``resolved`` ``{field: value}``, ``warnings`` (its log lines), ``version`` (``sglang.__version__``), ``stage``
    (``"import"`` while ``sglang`` and ``sglang.srt.server_args`` were being imported, ``"args"`` from
    ``prepare_server_args`` on, None when the output did not say)."""

    ok: bool
    exception: str | None
    message: str
    resolved: dict[str, Any]
    warnings: tuple[str, ...]
    version: str | None
    stage: str | None = None

    @property
    def import_failed(self) -> bool:
        """SGLang could not be asked: importing it (or a module it imports while parsing the arguments) failed, so
        the result says nothing about the command."""
        return not self.ok and (self.stage == "import" or self.exception in ("ImportError", "ModuleNotFoundError"))


def parse_dry_run_output(stdout: str) -> DryRunResult | None:
    """Parse the script's output (the last ``SPECDASH-DRY-RUN`` line); None when there is none (python missing,
    killed, ...)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            return DryRunResult(bool(data.get("ok")), data.get("exception"), data.get("message") or "",
                                dict(data.get("resolved") or {}), tuple(data.get("warnings") or ()),
                                data.get("version"), data.get("stage") if isinstance(data.get("stage"), str) else None)
    return None


@dataclasses.dataclass(frozen=True)
class Disagreement:
    """One difference between specdash and SGLang: ``field`` (``verdict`` for error/no-error), ``specdash`` and
    ``sglang`` values."""

    field: str
    specdash: Any
    sglang: Any


def compare(report, result: DryRunResult, fields: tuple[str, ...] = COMPARED_FIELDS) -> list[Disagreement]:
    """Compare a :class:`~specdash.sglang.validate.ValidationReport` with SGLang's :class:`DryRunResult`.

    The verdict counts only errors SGLang raises while parsing/resolving arguments (stages ``argparse`` and
    ``server_args``). Values are compared only when both sides succeeded and specdash predicted a definite value
    (None = "SGLang decides at launch", e.g. an attention backend chosen from the GPU).
    """
    if result.import_failed:
        return []  # SGLang was not asked: there is nothing to compare (run_dry_run reports it as a problem)
    predicted_error = any(d.severity == "error" and d.stage in ("argparse", "server_args") for d in report.diagnostics)
    out: list[Disagreement] = []
    if predicted_error != (not result.ok):
        out.append(Disagreement("verdict", "error" if predicted_error else "ok",
                                f"{result.exception}: {result.message}" if not result.ok else "ok"))
        return out
    if not result.ok:
        return out
    for field in fields:
        mine = report.effective.get(field)
        if mine is None or field not in result.resolved:
            continue
        theirs = result.resolved.get(field)
        if mine != theirs:
            out.append(Disagreement(field, mine, theirs))
    return out


def argv_of(report) -> list[str]:
    """The argument words of the report's command (what follows the launcher), as SGLang's argv."""
    command = report.command
    return [w.text for w in command.args] if command is not None else []


async def run_dry_run(host, report, python: str = "python3") -> tuple[DryRunResult | None, str | None]:
    """Run the dry run of ``report``'s command on ``host`` (a :class:`~specdash.hosts.base.Host`) with ``python``
    (at most 300 s). Returns ``(result, None)``, or ``(None, problem)`` with one line saying why there is no result
    (host error, SGLang not importable, no output). Never raises."""
    try:
        out = await host.run(dry_run_command(python), timeout_s=300,
                             input=dry_run_request(argv_of(report), report.command.env_dict()))
    except Exception as exc:  # noqa: BLE001 - HostError or a transport failure: said, never raised
        return None, f"dry run failed: {exc}"
    parsed = parse_dry_run_output(out.stdout)
    if parsed is not None and not parsed.ok and "No module named 'sglang'" in f"{parsed.exception}: {parsed.message}":
        return None, (f"dry run needs SGLang on {host.name}: {python} cannot import sglang "
                      "(set the host's python in config.yaml hosts: python: ...)")
    if parsed is None:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"dry run failed: {tail[0][:200]}"
    if parsed.import_failed:  # SGLang was never asked: no verdict, no agreement, no disagreement
        return None, (f"dry run could not ask SGLang on {host.name}: importing it with {python} failed "
                      f"({parsed.exception}: {parsed.message[:200]}); nothing is known about the command")
    return parsed, None
