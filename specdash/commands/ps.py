"""``specdash ps TARGET [--json]``: list the GPUs and the classified GPU processes of a host."""

from __future__ import annotations

import argparse
import sys

NAME = "ps"
HELP = "list GPUs and their processes, classified server / orphan / zombie / foreign / unknown"
DESCRIPTION = (
    "List the GPUs of TARGET ([user@]host[:port], an ~/.ssh/config alias, or 'local') and every process holding "
    "GPU memory, classified from the process tree as server (a live SGLang launcher owns it), orphan (an SGLang "
    "worker whose launcher crashed), zombie, foreign (another user, graphics, or a job that is not from a server: "
    "never killed) or unknown (PID from another PID namespace). GPU memory that no listed process holds is "
    "reported per GPU, with the processes of yours that hold the GPU device files open (pattern: environment "
    "variable SPECDASH_GPU_DEVICE_GLOBS, default /dev/nvidia*:/dev/dri/*). NVML on this machine, nvidia-smi "
    "elsewhere."
)


#: The usage error when neither TARGET nor a default host is given (connect, ps, clean).
NO_TARGET = "give a TARGET, or set default_host in config.yaml (or SPECDASH_DEFAULT_HOST)"


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """TARGET and the SSH options shared by ``ps`` and ``clean`` (same meaning as for ``connect``)."""
    parser.add_argument("target", metavar="TARGET", nargs="?",
                        help="[user@]host[:port], an ~/.ssh/config alias, 'local', or a host named in config.yaml "
                             "(default: default_host in config.yaml or SPECDASH_DEFAULT_HOST)")
    parser.add_argument("-p", "--port", type=int, metavar="PORT", help="SSH port (overrides TARGET and ssh config)")
    parser.add_argument("-i", "--identity", metavar="IDENTITY_FILE", help="private key file for SSH")
    parser.add_argument("--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument("--from", dest="from_file", metavar="FILE",
                        help="read a pasted nvidia-smi output instead of a host (the human table, or a "
                             "--query-compute-apps / --query-gpu CSV output; - for standard input): GPUs and "
                             "processes with what a paste can tell; nothing is offered for kill")
    parser.add_argument("--json", action="store_true",
                        help='one JSON object: {"gpus": [...], "processes": [...], "summary": ..., ...}')


def open_target(args: argparse.Namespace):
    """The Host for ``args.target`` (not connected). Raises specdash.cli.UsageError for a bad TARGET."""
    from specdash.cli import UsageError
    from specdash.config import ConfigError, load_config

    try:  # a host named in config.yaml stands for its target, SSH port and key, as for connect
        config = load_config()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    args.target = config.target_or_default(args.target)
    if args.target is None:
        raise UsageError(NO_TARGET)
    named = config.host(args.target)
    if named is not None:
        args.target = named.target
        args.port = args.port or named.port
        args.identity = args.identity or named.identity_file
    if args.target == "local" and args.port is None and args.identity is None and args.known_hosts is None:
        from specdash.hosts.local import LocalHost

        return LocalHost()
    try:
        from specdash.hosts.target import open_host
    except ImportError:  # pragma: no cover - the host layer ships with the package
        raise UsageError("SSH targets are not available in this build (specdash.hosts.target missing)") from None
    try:
        return open_host(args.target, port=args.port, identity_file=args.identity, known_hosts=args.known_hosts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


async def look(host, source: str | None = None):
    """Connect, sample once, read the process table and classify: a :class:`specdash.gpu.inspect.GpuView`.

    Raises HostError (one line) when the host cannot be reached.
    """
    from specdash.gpu.container import detect_container
    from specdash.gpu.inspect import inspect_host
    from specdash.gpu.proctable import current_user
    from specdash.gpu.sampler import make_sampler

    await host.connect()
    sampler = make_sampler(host, source=source)
    try:
        snapshot = await sampler.sample_once()
    finally:
        await sampler.close()
    container = await detect_container(host)
    return await inspect_host(host, snapshot, await current_user(host), container=container), sampler


def view_json(view) -> dict:
    """The ``--json`` object.

    ``gpus``: index, name, uuid, memory_used_mib, memory_total_mib, utilization_pct and ``unattributed_mib`` (used
    memory no listed process holds; null when it cannot be told); ``processes``: see
    :meth:`specdash.gpu.classify.ClassifiedProcess.to_json` (``class``, ``reason``, ``source``, ``target``);
    ``left``: processes of a crashed server's group left alone (pid, command, why); ``container``: null or
    {kind, evidence, meaning}; ``notes`` (lines) and ``summary`` (the one line ``ps`` prints); ``error`` only when
    no GPU could be read (e.g. "no NVIDIA driver on this host").
    """
    out = {
        "gpus": [{"index": g.index, "name": g.name, "uuid": g.uuid, "memory_used_mib": g.memory_used_mib,
                  "memory_total_mib": g.memory_total_mib, "utilization_pct": g.utilization_pct,
                  "unattributed_mib": view.unattributed_mib.get(g.index)}
                 for g in view.snapshot.gpus],
        "processes": [p.to_json() for p in view.processes],
        "left": [{"pid": row.pid, "command": row.args, "why": why} for row, why in view.left],
        "container": None if view.container is None else {
            "kind": view.container.kind, "evidence": view.container.evidence, "meaning": view.container.meaning},
        "notes": view.notes,
        "summary": view.summary,
    }
    if view.snapshot.error:
        out["error"] = view.snapshot.error
    return out


def _cell(value, width: int) -> str:
    text = "-" if value is None else str(value)
    return text.ljust(width)


def view_text(view) -> str:
    """Human-readable tables: GPUs, processes (with the reason under each), and the summary line."""
    lines = []
    snap = view.snapshot
    if snap.error:
        lines.append(f"GPUs: {snap.error}")
    else:
        lines.append(f"{'GPU':<4}{'NAME':<28}{'MEMORY USED / TOTAL':<24}UTIL")
        for g in snap.gpus:
            mem = f"{_cell(g.memory_used_mib, 0).strip()} / {_cell(g.memory_total_mib, 0).strip()} MiB"
            util = "[N/A]" if g.utilization_pct is None else f"{g.utilization_pct} %"
            lines.append(f"{g.index:<4}{g.name[:27]:<28}{mem:<24}{util}")
        if snap.warning:
            lines.append(f"warning: {snap.warning}")
        for index, mib in sorted(view.unaccounted_mib.items()):
            lines.append(f"GPU {index}: {mib} MiB used by processes the driver does not list")
    if view.processes:
        lines.append("")
        lines.append(f"{'PID':<9}{'GPU':<5}{'MiB':<9}{'CLASS':<9}{'USER':<12}{'PPID':<9}{'PGID':<9}COMMAND")
        for p in view.processes:
            mib = p.used_mib if p.source == "driver" else ("?" if p.source == "device files" else "-")
            gpu = p.gpu_index if p.source == "driver" else ("?" if p.source == "device files" else "-")
            lines.append(f"{p.pid:<9}{_cell(gpu, 5)}{_cell(mib, 9)}{p.process_class:<9}"
                         f"{_cell(p.user, 12)}{_cell(p.ppid, 9)}{_cell(p.pgid, 9)}{(p.command or p.name)[:100]}")
            lines.append(f"{'':<9}{p.reason}")
    elif not snap.error:
        lines.append("")
        lines.append("no GPU processes listed by the driver" if view.unaccounted_mib else "no GPU processes")
    for row, why in view.left:
        lines.append(f"left alone: PID {row.pid} ({row.args[:60]}) — {why}")
    if not snap.error:  # with no GPU the first line already says why
        for note in view.notes:
            lines.append(f"note: {note}")
        lines.append("")
        lines.append(view.summary)
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    import asyncio

    from specdash.hosts.base import HostError
    from specdash.text.display import clean

    if getattr(args, "from_file", None):
        return run_pasted(args)
    host = open_target(args)

    async def main():
        try:
            view, _ = await look(host)
        finally:
            await host.close()
        return view

    try:
        view = asyncio.run(main())
    except HostError as exc:
        sys.stderr.write(f"specdash ps: error: {clean(exc, max_chars=1000)}\n")
        return 1
    if args.json:
        import json

        sys.stdout.write(json.dumps(view_json(view)) + "\n")
    else:
        sys.stdout.write(clean(view_text(view), newlines=True))  # process names come from the host
    return 0


def run_pasted(args: argparse.Namespace) -> int:
    """``ps --from FILE|-``: exit 0, or 2 (usage) when TARGET is given too, FILE cannot be read, or it holds no
    nvidia-smi output."""
    from specdash.cli import UsageError
    from specdash.gpu.pasted import pasted_json, pasted_text
    from specdash.gpu.smi_table import parse_pasted_smi
    from specdash.text.display import clean

    if args.target is not None:
        raise UsageError("give TARGET or --from FILE, not both")
    if args.from_file == "-":
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
    else:
        try:
            with open(args.from_file, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError as exc:
            raise UsageError(f"cannot read {args.from_file}: {exc.strerror or exc}") from None
    smi = parse_pasted_smi(text)
    if not smi.found:
        raise UsageError(f"no nvidia-smi output in {'standard input' if args.from_file == '-' else args.from_file} "
                         "(expected the nvidia-smi table or a --query-compute-apps / --query-gpu CSV output)")
    if args.json:
        import json

        sys.stdout.write(json.dumps(pasted_json(smi)) + "\n")
    else:
        sys.stdout.write(clean(pasted_text(smi), newlines=True))
    return 0
