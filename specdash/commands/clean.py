"""``specdash clean TARGET [--yes]``: kill orphaned and zombie processes that hold GPU memory, safely."""

from __future__ import annotations

import argparse
import sys

NAME = "clean"
HELP = "kill orphaned/zombie processes holding GPU memory (asks first unless --yes); exit 0 when freed"
DESCRIPTION = (
    "Find processes on TARGET that hold GPU memory although their server is gone (orphans: parent exited; "
    "zombies), show them, and after confirmation send SIGTERM to their process group (SIGKILL after a grace "
    "period), re-checking each PID's identity before every signal. Never another user's process, never by name. "
    "Waits until the GPU memory is released: exit 0 when it was, 1 when it was not."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from specdash.commands.ps import add_target_arguments

    add_target_arguments(parser)
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--grace-s", type=float, default=10.0, metavar="SECONDS",
                        help="seconds between SIGTERM and SIGKILL (default 10)")
    parser.add_argument("--timeout-s", type=float, default=60.0, metavar="SECONDS",
                        help="seconds to wait for the driver to release the memory (default 60)")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from specdash.cli import UsageError
    from specdash.commands.ps import look, open_target
    from specdash.hosts.base import HostError

    if args.grace_s < 0 or args.timeout_s < 0:
        raise UsageError("--grace-s and --timeout-s must be >= 0")
    host = open_target(args)

    def say(line: str) -> None:
        sys.stderr.write(f"  {line}\n")
        sys.stderr.flush()

    async def main() -> int:
        from specdash.gpu.kill import safe_kill
        from specdash.gpu.sampler import make_sampler

        view, _ = await look(host)
        if view.snapshot.error:
            print(f"nothing to clean: {view.snapshot.error}")
            return 0
        targets = [p for p in view.processes if p.cleanable]
        if not targets:
            print(f"nothing to clean: {view.summary}")
            return 0
        print(view.summary)
        for p in targets:
            mib = "[N/A]" if p.used_mib is None else f"{p.used_mib} MiB"
            print(f"  PID {p.pid}  GPU {p.gpu_index}  {mib}  {p.process_class}  user {p.user}  PGID {p.pgid}  "
                  f"{p.command or p.name}")
            print(f"      {p.reason}")
        pids = sorted({p.pid for p in targets})
        if not args.yes:
            if not sys.stdin.isatty():
                print("not killing anything: stdin is not a terminal (use --yes)")
                return 1
            answer = input(f"Kill these {len(pids)} process(es) (SIGTERM, SIGKILL after {args.grace_s:g} s)? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing killed")
                return 1
        sampler = make_sampler(host)
        try:
            report = await safe_kill(host, targets, view.user, sampler.sample_once, grace_s=args.grace_s,
                                     release_timeout_s=args.timeout_s, on_progress=say)
        finally:
            await sampler.close()
        print(report.summary())
        if report.released:
            print("GPU memory released")
            return 0
        print("GPU memory NOT released", file=sys.stderr)
        return 1

    async def guarded() -> int:
        try:
            return await main()
        finally:
            await host.close()

    try:
        return asyncio.run(guarded())
    except HostError as exc:
        sys.stderr.write(f"specdash clean: error: {exc}\n")
        return 1
