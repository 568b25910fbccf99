"""``specdash pair --target PATH --draft PATH``: will SGLang feed the draft the hidden states it was trained on?"""

from __future__ import annotations

import argparse
import sys

NAME = "pair"
HELP = "check a draft model against its target before launch (EAGLE-3 layers, shapes, vocab, architecture)"
DESCRIPTION = (
    "Read the target's and the draft's config.json (and the draft's safetensors header, never the weights) on "
    "this machine or on --host, and say whether SGLang will feed the draft the hidden states it was trained on. "
    "PATH is a model directory or a config.json file. Without --sglang-version the installed SGLang is probed "
    "(its own set_eagle3_layers_to_capture on a stand-in object); if that fails, the newest known rules are used. "
    "Exit status: 0 no error, 1 an error finding, 2 usage or unreadable files."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, metavar="PATH", help="target model directory or its config.json")
    parser.add_argument("--draft", required=True, metavar="PATH", help="draft model directory or its config.json")
    parser.add_argument("--algorithm", default="EAGLE3", metavar="A",
                        help="speculative_algorithm: EAGLE3 (default), EAGLE, NEXTN, STANDALONE, NGRAM")
    parser.add_argument("--sglang-version", metavar="V",
                        help="apply the rules of this SGLang version (e.g. 0.5.23) instead of probing")
    parser.add_argument("--host", metavar="TARGET", help="read the files (and probe) on TARGET; default: this machine")
    parser.add_argument("--python", default="python3", metavar="PY",
                        help="python with SGLang installed on the host, for the probe (default python3)")
    parser.add_argument("--no-probe", action="store_true", help="do not probe the installed SGLang; use the rules")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from specdash.cli import UsageError

    algorithm = args.algorithm.strip().upper()
    from specdash.sglang.pairing.analyze import KNOWN_ALGORITHMS

    if algorithm not in KNOWN_ALGORITHMS:
        raise UsageError(f"unknown --algorithm {args.algorithm!r} (choose from {', '.join(KNOWN_ALGORITHMS)})")
    if args.sglang_version is not None:
        from specdash.sglang.pairing.layer_rules import parse_version

        try:
            parse_version(args.sglang_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    import asyncio  # here, not at the top: `specdash --help` imports this module and must stay fast

    host = _open_host(args.host)
    try:
        report, title = asyncio.run(_analyze(host, args, algorithm))
    except _LoadFailed as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        sys.stdout.write(report.to_json_text() + "\n")
    else:
        from specdash.sglang.pairing.text_report import render_text
        from specdash.text.display import clean

        sys.stdout.write(clean(render_text(report, title=title), newlines=True) + "\n")  # names from the model files
    return 1 if report.has_errors else 0


class _LoadFailed(Exception):
    pass


def _open_host(target: str | None):
    from specdash.cli import UsageError

    if target in (None, "local"):
        from specdash.hosts.local import LocalHost

        return LocalHost()
    from specdash.hosts.target import open_host

    try:
        return open_host(target)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


async def _analyze(host, args: argparse.Namespace, algorithm: str):
    from specdash.hosts.base import HostError
    from specdash.sglang.pairing.loader import PairLoadError
    from specdash.sglang.pairing.service import PairingService

    try:
        await host.connect()
        service = PairingService(host, python=args.python, probe=not args.no_probe)
        report = await service.report(args.target, args.draft, algorithm, sglang_version=args.sglang_version)
        inputs = await service.inputs(args.target, args.draft)
    except (PairLoadError, HostError) as exc:
        raise _LoadFailed(str(exc)) from None
    finally:
        try:
            await host.close()
        except Exception:  # noqa: BLE001 - closing must not hide the result
            pass
    tarch = (inputs.target_config.get("architectures") or ["?"])[0]
    darch = (inputs.draft_config.get("architectures") or ["?"])[0]
    title = (f"pairing on {getattr(host, 'name', 'host')}: target {tarch} ({inputs.target_dir}) "
             f"<- draft {darch} ({inputs.draft_dir})")
    for note in inputs.notes:
        title += f"\nnote: {note}"
    return report, title
