"""Command-line entry point: ``specdash <command> ...``.

Each subcommand lives in its own module under :mod:`specdash.commands` and exposes

* ``NAME`` (str) and ``HELP`` (one line),
* ``add_arguments(parser: argparse.ArgumentParser) -> None``,
* ``run(args: argparse.Namespace) -> int`` (the exit code).

Command modules import only the standard library at top level, so ``specdash --help``
stays fast; heavy imports (Textual, asyncssh, httpx) happen inside ``run``.

Exit codes: 0 success, 1 a finding the command reports as failure (e.g. an ``error``
diagnostic), 2 a usage error (one line on stderr).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from specdash import __version__

#: Subcommands in the order ``--help`` lists them (modules of :mod:`specdash.commands`).
COMMAND_MODULES: tuple[str, ...] = (
    "connect",
    "replay",
    "validate",
    "pair",
    "scan",
    "ps",
    "clean",
    "bench",
    "locate",
)


class UsageError(Exception):
    """Raised by a subcommand for a usage error; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one clear line on stderr and exit code 2."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]  # noqa: F821
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _load_commands() -> list:
    return [importlib.import_module(f"specdash.commands.{name}") for name in COMMAND_MODULES]


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every available subcommand registered."""
    parser = _Parser(
        prog="specdash",
        description="Keyboard-driven console for SGLang speculative decoding on remote GPU hosts.",
    )
    parser.add_argument("--version", action="version", version=f"specdash {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _load_commands():
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the chosen subcommand; return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args._run(args) or 0)
    except UsageError as exc:
        from specdash.text.display import clean

        sys.stderr.write(f"specdash {args.command}: error: {clean(exc, max_chars=1000)}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
