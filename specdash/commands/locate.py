"""``specdash locate [WHAT] [--json]``: print where specdash keeps its config, user themes, state, sessions, runs,
bench results and screenshots.

``--json`` prints one object, location name -> absolute path (strings), with the keys ``config``, ``themes``,
``state``, ``sessions``, ``runs``, ``bench``, ``screenshots`` (README, "JSON output").
"""

from __future__ import annotations

import argparse
import sys

NAME = "locate"
HELP = "print the config file path and the themes, state, sessions, runs, bench results and screenshots folders"
DESCRIPTION = (
    "Print where specdash keeps its files (XDG locations; SPECDASH_CONFIG and SPECDASH_STATE_DIR override). "
    "With WHAT, print only that path, for scripts: e.g. ls \"$(specdash locate sessions)\"."
)

_LABELS = {
    "config": "config file",
    "themes": "themes dir",
    "state": "state dir",
    "sessions": "sessions dir",
    "runs": "runs dir",
    "bench": "bench results dir",
    "screenshots": "screenshots dir",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", nargs="?", choices=tuple(_LABELS), metavar="WHAT",
                        help="print only this path: " + ", ".join(_LABELS))
    parser.add_argument("--json", action="store_true",
                        help="print every location as one JSON object (name -> path)")


def run(args: argparse.Namespace) -> int:
    from specdash.paths import locations

    paths = locations()
    if args.json:
        import json

        wanted = {args.what: paths[args.what]} if args.what else paths
        sys.stdout.write(json.dumps({key: str(path) for key, path in wanted.items()}, indent=2) + "\n")
        return 0
    if args.what:
        sys.stdout.write(f"{paths[args.what]}\n")
        return 0
    width = max(len(label) for label in _LABELS.values()) + 1
    for key, label in _LABELS.items():
        sys.stdout.write(f"{label + ':':<{width}} {paths[key]}\n")
    return 0
