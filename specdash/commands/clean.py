"""``specdash clean TARGET [--yes] [--json]``: kill what is left of crashed servers, safely."""

from __future__ import annotations

import argparse
import sys

NAME = "clean"
HELP = "kill what crashed SGLang servers left holding GPU memory (asks first unless --yes); exit 0 when freed"
DESCRIPTION = (
    "Find processes on TARGET that hold GPU memory although their server is gone (orphans: SGLang workers that no "
    "live launcher owns; zombies), together with the other processes of the same crashed server (detokenizer, "
    "data-parallel controller), show them with what each holds, and after confirmation send SIGTERM to their "
    "process group (SIGKILL after a grace period), re-checking each PID's identity (start time in clock ticks, "
    "user, command line) before every signal. Never another user's process, never a live server, never a "
    "detached job that is not from a server, never by name. Waits until the GPU memory is released: exit 0 when "
    "it was, 1 when it was not or when memory is held by processes that cannot be cleaned from here."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from specdash.commands.ps import add_target_arguments

    add_target_arguments(parser)
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true",
                        help='one JSON object: {"targets": [...], "left": [...], "summary": ..., "report": ...}')
    parser.add_argument("--grace-s", type=float, default=10.0, metavar="SECONDS",
                        help="seconds between SIGTERM and SIGKILL (default 10)")
    parser.add_argument("--timeout-s", type=float, default=60.0, metavar="SECONDS",
                        help="seconds to wait for the driver to release the memory (default 60)")


def report_json(report) -> dict:
    """A :class:`specdash.gpu.kill.KillReport` as JSON: outcomes (pid, class, what, result, detail, signals,
    before_mib, after_mib), per-GPU used MiB before/after, released, left, summary."""
    return {
        "outcomes": [{"pid": o.pid, "class": o.process_class, "what": o.what, "source": o.source,
                      "result": o.result, "detail": o.detail, "signals": o.signals, "before_mib": o.before_mib,
                      "after_mib": o.after_mib, "command": o.command} for o in report.outcomes],
        "gpu_used_before_mib": {str(k): v for k, v in report.gpu_used_before_mib.items()},
        "gpu_used_after_mib": {str(k): v for k, v in report.gpu_used_after_mib.items()},
        "released": report.released,
        "left": report.left,
        "summary": report.summary(),
    }


def run(args: argparse.Namespace) -> int:
    import asyncio

    from specdash.cli import UsageError
    from specdash.commands.ps import look, open_target
    from specdash.hosts.base import HostError

    if args.grace_s < 0 or args.timeout_s < 0:
        raise UsageError("--grace-s and --timeout-s must be >= 0")
    host = open_target(args)
    as_json = bool(getattr(args, "json", False))
    out: dict = {}

    def say(line: str) -> None:
        sys.stderr.write(f"  {line}\n")
        sys.stderr.flush()

    def show(line: str = "") -> None:
        if not as_json:
            print(line)

    async def main() -> int:
        from specdash.gpu.kill import safe_kill
        from specdash.gpu.sampler import make_sampler

        view, _ = await look(host)
        out.update(summary=view.summary, targets=[], left=[], notes=view.notes, report=None, released=None)
        if view.snapshot.error:
            out["error"] = view.snapshot.error
            show(f"nothing to clean: {view.snapshot.error}")
            return 0
        targets = [p for p in view.processes if p.cleanable]
        out["targets"] = [p.to_json() | {"holds": p.holds} for p in targets]
        out["left"] = ([{"pid": r.pid, "command": r.args, "why": why} for r, why in view.left]
                       + [{"pid": p.pid, "command": p.command or p.name, "why": p.reason}
                          for p in view.processes if p.process_class in ("orphan", "zombie") and not p.cleanable])
        for note in view.notes:
            show(f"note: {note}")
        if not targets:
            show(f"nothing to clean: {view.summary}")
            for item in out["left"]:
                show(f"  left alone: PID {item['pid']} — {item['why']}")
            # memory is held, but by nothing that can be cleaned from here: not "freed"
            return 1 if view.unaccounted_mib else 0
        show(view.summary)
        for p in targets:
            show(f"  PID {p.pid}  {p.holds}  {p.process_class}  user {p.user}  PGID {p.pgid}  {p.command or p.name}")
            show(f"      {p.reason}")
        for item in out["left"]:
            show(f"  left alone: PID {item['pid']} ({item['command'][:60]}) — {item['why']}")
        pids = sorted({p.pid for p in targets})
        if not args.yes:
            if not sys.stdin.isatty():
                out["not_killed"] = "stdin is not a terminal (use --yes)"
                show("not killing anything: stdin is not a terminal (use --yes)")
                return 1
            answer = input(f"Kill these {len(pids)} process(es) (SIGTERM, SIGKILL after {args.grace_s:g} s)? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                out["not_killed"] = "not confirmed"
                show("nothing killed")
                return 1
        sampler = make_sampler(host)
        try:
            report = await safe_kill(host, targets, view.user, sampler.sample_once, grace_s=args.grace_s,
                                     release_timeout_s=args.timeout_s, on_progress=say)
        finally:
            await sampler.close()
        out["report"], out["released"] = report_json(report), report.released
        show(report.summary())
        if report.released:
            show("GPU memory released")
            return 0
        if not as_json:
            print("GPU memory NOT released", file=sys.stderr)
        return 1

    async def guarded() -> int:
        try:
            return await main()
        finally:
            await host.close()

    try:
        code = asyncio.run(guarded())
    except HostError as exc:
        sys.stderr.write(f"specdash clean: error: {exc}\n")
        return 1
    if as_json:
        import json

        sys.stdout.write(json.dumps(out) + "\n")
    return code
