"""Command-line entry point: ``specdash <command> ...``.

Each subcommand lives in its own module under :mod:`specdash.commands` and exposes

* ``NAME`` (str) and ``HELP`` (one line),
* ``add_arguments(parser: argparse.ArgumentParser) -> None``,
* ``run(args: argparse.Namespace) -> int`` (the exit code).

Command modules import only the standard library at top level, so ``specdash --help``
stays fast; heavy imports (Textual, asyncssh, httpx) happen inside ``run``.

Exit codes: 0 success, 1 a finding the command reports as failure (e.g. an ``error``
diagnostic), 2 a usage error (one line on stderr).

Options before the command: ``--debug`` (log at DEBUG level), ``--log-file PATH`` (write the log there; at INFO
level unless ``--debug``), ``--print-completion {bash,zsh,tcsh}`` (print a shell completion script, made by shtab
from this parser). Without ``--log-file``, ``--debug`` logs to stderr, or for the full-screen commands
(``connect``, ``replay``) to ``<state dir>/specdash.log``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

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
    "config",
    "locate",
)


class UsageError(Exception):
    """Raised by a subcommand for a usage error; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one clear line on stderr and exit code 2.

    A subcommand's parser gets its arguments when it is first used (:meth:`complete`): ``specdash --help`` and
    ``specdash scan ...`` build only the parsers they parse with, and print exactly what the whole parser would.
    """

    #: ``add_arguments`` of the command module, until :meth:`complete` has called it
    _deferred_arguments: Callable[[argparse.ArgumentParser], None] | None = None

    def complete(self) -> argparse.ArgumentParser:
        """Add the arguments deferred by :func:`build_parser` (once); return the parser."""
        add, self._deferred_arguments = self._deferred_arguments, None
        if add is not None:
            add(self)
        return self

    def parse_known_args(self, args=None, namespace=None):
        self.complete()
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


#: Commands that take over the terminal: ``--debug`` alone logs to a file for them, not to stderr.
FULL_SCREEN_COMMANDS = ("connect", "replay")
#: Shells ``--print-completion`` supports (shtab's).
COMPLETION_SHELLS = ("bash", "zsh", "tcsh")
#: shtab's completion hint for an argument that names a local file.
FILE_COMPLETION = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}


class _PrintCompletion(argparse.Action):
    """``--print-completion SHELL``: print shtab's completion script for the whole parser and exit 0."""

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        import shtab

        for choices in (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
            for command in choices.values():
                command.complete()
        sys.stdout.write(shtab.complete(parser, shell=values, root_prefix="specdash"))
        raise SystemExit(0)


def _load_commands() -> list:
    return [importlib.import_module(f"specdash.commands.{name}") for name in COMMAND_MODULES]


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every available subcommand registered; a subcommand's own arguments are
    added when its parser is first used (``_Parser.complete``), so a command line builds only what it needs."""
    parser = _Parser(
        prog="specdash",
        description="Keyboard-driven console for SGLang speculative decoding on remote GPU hosts.",
    )
    parser.add_argument("--version", action="version", version=f"specdash {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="log connections, sampling, kills and launches at DEBUG level (see --log-file)")
    parser.add_argument("--log-file", metavar="PATH",
                        help="append the log to PATH (default with --debug: stderr, or <state dir>/specdash.log "
                             "for connect and replay)").complete = FILE_COMPLETION  # type: ignore[attr-defined]
    parser.add_argument("--print-completion", choices=COMPLETION_SHELLS, action=_PrintCompletion, metavar="SHELL",
                        help="print a completion script for SHELL (bash, zsh, tcsh) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in _load_commands():
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
        cmd._deferred_arguments = module.add_arguments
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
        configure_logging(args)
    except OSError as exc:
        sys.stderr.write(f"specdash: error: cannot open the log file {exc.filename}: {exc.strerror or exc}\n")
        return 2
    try:
        return int(args._run(args) or 0)
    except UsageError as exc:
        from specdash.text.display import clean

        sys.stderr.write(f"specdash {args.command}: error: {clean(exc, max_chars=1000)}\n")
        return 2
    except KeyboardInterrupt:
        return 130


def configure_logging(args: argparse.Namespace) -> None:
    """Send the ``specdash`` logger's records where ``--debug`` / ``--log-file`` say; nothing without either.

    Raises OSError when the log file cannot be opened.
    """
    debug, path = getattr(args, "debug", False), getattr(args, "log_file", None)
    if not debug and not path:
        return
    import logging

    from specdash.log import get_logger
    if path is None and args.command in FULL_SCREEN_COMMANDS:
        from specdash.paths import ensure_dir, state_dir

        path = str(ensure_dir(state_dir()) / "specdash.log")
    handler: logging.Handler = logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = get_logger("specdash")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if debug else logging.INFO)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
