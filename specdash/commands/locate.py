"""``specdash locate [WHAT]``: print where specdash keeps its config, state, sessions, runs and bench results."""

from __future__ import annotations

import argparse
import sys

NAME = "locate"
HELP = "print the config file path and the state, sessions, runs and bench results folders"
DESCRIPTION = (
    "Print where specdash keeps its files (XDG locations; SPECDASH_CONFIG and SPECDASH_STATE_DIR override). "
    "With WHAT, print only that path, for scripts: e.g. ls \"$(specdash locate sessions)\"."
)

_LABELS = {
    "config": "config file",
    "state": "state dir",
    "sessions": "sessions dir",
    "runs": "runs dir",
    "bench": "bench results dir",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", nargs="?", choices=tuple(_LABELS), metavar="WHAT",
                        help="print only this path: " + ", ".join(_LABELS))


def run(args: argparse.Namespace) -> int:
    from specdash.paths import locations

    paths = locations()
    if args.what:
        sys.stdout.write(f"{paths[args.what]}\n")
        return 0
    width = max(len(label) for label in _LABELS.values()) + 1
    for key, label in _LABELS.items():
        sys.stdout.write(f"{label + ':':<{width}} {paths[key]}\n")
    return 0
