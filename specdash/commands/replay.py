"""``specdash replay FILE [--speed X]`` and ``specdash replay --summary FILE``: review a recorded session."""

from __future__ import annotations

import argparse
import os
import sys

NAME = "replay"
HELP = "replay a recorded session in the app (read-only), or print its timeline with --summary"
DESCRIPTION = (
    "Open a session file recorded by specdash (YAML stream, optionally .gz) in the same panes, read-only: "
    "p pauses, [ and ] step, seek to a time or the next finding, change the speed. A damaged file replays "
    "what is readable and says what was skipped. --summary prints the timeline of findings, configs and "
    "benchmark results without the UI."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="session file (.yaml or .yaml.gz)")
    parser.add_argument("--speed", type=float, default=1.0, metavar="X",
                        help="replay speed factor (default 1: the recorded pace; 10 = ten times faster)")
    parser.add_argument("--theme", metavar="NAME", help="colour theme (as for connect)")
    parser.add_argument("--summary", action="store_true",
                        help="print the timeline of findings, configs and benchmark results, no UI")
    parser.add_argument("--json", action="store_true",
                        help="with --summary: print the timeline as one JSON object (schema in the README)")


def run(args: argparse.Namespace) -> int:
    from specdash.cli import UsageError

    if args.json and not args.summary:
        raise UsageError("--json goes with --summary (the replay UI has no JSON form)")
    if not args.speed > 0:
        raise UsageError(f"--speed must be greater than 0, got {args.speed:g}")
    if not os.path.exists(args.file):
        raise UsageError(f"{args.file}: no such file")

    from specdash.session.reader import SessionError, read_session

    try:
        log = read_session(args.file)
    except SessionError as exc:
        from specdash.text.display import clean

        sys.stderr.write(f"specdash replay: error: {clean(exc, max_chars=1000)}\n")
        return 1

    if args.summary:
        from specdash.session.summary import summary_json, summary_lines

        if args.json:
            import json

            sys.stdout.write(json.dumps(summary_json(log), indent=2, default=str) + "\n")
        else:
            sys.stdout.write("\n".join(summary_lines(log)) + "\n")
        return 0

    from specdash.app.keymap import load_app_config
    from specdash.app.themes import available_theme_names
    from specdash.config import ConfigError

    try:
        config = load_app_config()
    except ConfigError as exc:
        sys.stderr.write(f"specdash replay: error: {exc}\n")
        return 2
    theme = args.theme or config.theme
    if theme and theme not in available_theme_names():
        raise UsageError(f"unknown theme {theme!r} (choose from {', '.join(available_theme_names())})")
    if not sys.stdout.isatty():
        sys.stderr.write("specdash replay: error: needs a terminal (or use --summary)\n")
        return 2
    from specdash.app.replay import run_replay

    return int(run_replay(log, args.speed, theme=theme, keymap=dict(config.keymap)) or 0)
