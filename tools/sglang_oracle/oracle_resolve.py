"""Run SGLang's own argument resolution on many argv lists (run inside the oracle venv).

Usage: ``~/.cache/specdash-oracle/bin/python tools/sglang_oracle/oracle_resolve.py < cases.jsonl > results.jsonl``

Each input line: ``{"id": ..., "argv": [...], "env": {...}}``. Each output line: ``{"id", "ok": bool,
"exception": type name or null, "message": str, "resolved": {field: value}}`` where resolved holds the
speculative fields and the fields speculation rewrites. Newer releases: ``prepare_server_args(argv)`` then
``resolve_once()`` and ``resolved_dict()``; older ones: constructing ``ServerArgs`` runs ``__post_init__``.
No weights are loaded and no GPU is touched (pass ``--device cpu`` or a model dir holding only config.json).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys

FIELDS = (
    "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "max_running_requests", "disable_overlap_schedule", "enable_mixed_chunk",
    "page_size", "attention_backend", "device",
)


def _plain(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


def _check(args) -> dict:
    """Run ``ServerArgs.check_server_args()`` (what the launch runs right after resolution, before GPU work)."""
    if not hasattr(args, "check_server_args"):
        return {"ok": True, "exception": None, "message": "no check_server_args"}
    try:
        args.check_server_args()
        return {"ok": True, "exception": None, "message": ""}
    except BaseException as exc:  # noqa: BLE001 - we report whatever SGLang raises
        return {"ok": False, "exception": type(exc).__name__, "message": str(exc)[:800]}


def resolve(argv: list[str], env: dict[str, str]) -> dict:
    from sglang.srt.server_args import prepare_server_args

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    captured = io.StringIO()
    handler = logging.StreamHandler(captured)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with contextlib.redirect_stderr(captured):
            args = prepare_server_args(argv)
            if hasattr(args, "resolve_once"):
                args.resolve_once()
                resolved = args.resolved_dict()
            else:
                resolved = vars(args)
            check = _check(args)
        return {"ok": True, "exception": None, "message": "", "log": captured.getvalue()[-4000:],
                "resolved": {f: _plain(resolved.get(f)) for f in FIELDS}, "check": check}
    except SystemExit as exc:
        return {"ok": False, "exception": "SystemExit", "message": captured.getvalue()[-800:] or str(exc),
                "resolved": {}}
    except BaseException as exc:  # noqa: BLE001 - we report whatever SGLang raises
        return {"ok": False, "exception": type(exc).__name__, "message": str(exc)[:800], "resolved": {}}
    finally:
        root.removeHandler(handler)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        out = resolve(case["argv"], case.get("env", {}))
        out["id"] = case.get("id")
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
