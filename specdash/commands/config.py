"""``specdash config [--example]``: check the config file, or print a full commented example of one."""

from __future__ import annotations

import argparse
import sys

NAME = "config"
HELP = "check config.yaml (exit 2 on a mistake, one line), or print a commented example with --example"
DESCRIPTION = (
    "Load the config file (specdash locate config) as connect does, keymap binding ids included, and say what it "
    "holds; a mistake is one line naming the file, line and key, exit 2. --example prints a full commented "
    "config.yaml with every setting."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--example", action="store_true", help="print a full commented example config.yaml")


def example_text() -> str:
    """The shipped example config (``specdash/config/example.yaml``), as text."""
    from importlib import resources

    return resources.files("specdash.config").joinpath("example.yaml").read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.example:
        sys.stdout.write(example_text())
        return 0
    from specdash.app.keymap import load_app_config
    from specdash.config import ConfigError

    try:
        config = load_app_config()
    except ConfigError as exc:
        sys.stderr.write(f"specdash config: error: {exc}\n")
        return 2
    from specdash.paths import config_file

    where = str(config.source) if config.source else f"{config_file()} (absent: defaults)"
    sys.stdout.write(f"{where}: ok, {len(config.hosts)} host(s), {len(config.workloads)} workload(s), "
                     f"{len(config.sweeps)} sweep(s), {len(config.keymap)} key(s) remapped"
                     + (f", default host {config.default_host}" if config.default_host else "")
                     + (f"; overridden by {', '.join(config.env_overrides)}" if config.env_overrides else "") + "\n")
    return 0
