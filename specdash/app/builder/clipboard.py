"""Copying the launch command out of the terminal: OSC 52 (wrapped for tmux) and a file.

OSC 52 asks the terminal to put text on the system clipboard: ``ESC ] 52 ; c ; <base64> BEL``. Inside tmux the
sequence must be wrapped in a DCS passthrough (``ESC P tmux; <sequence with every ESC doubled> ESC \\``), else tmux
swallows it (tmux also needs ``set -g allow-passthrough on`` or ``set-clipboard on``). Over SSH the terminal that
renders specdash is the user's own, so the copy lands on the user's machine.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path


def osc52_sequence(text: str, *, tmux: bool | None = None) -> str:
    """The escape sequence that copies ``text``; ``tmux`` None = decide from the ``TMUX`` environment variable."""
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    sequence = f"\x1b]52;c;{payload}\x07"
    if tmux is None:
        tmux = bool(os.environ.get("TMUX"))
    if tmux:
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


def command_file() -> Path:
    """Where the last copied command is written: ``<state dir>/launch-command.sh`` (see :mod:`specdash.paths`)."""
    from specdash.paths import state_dir

    return Path(state_dir()) / "launch-command.sh"


def write_command_file(text: str, path: Path | None = None) -> Path:
    """Write ``text`` (plus a final newline) to ``path`` (default :func:`command_file`); return the path.

    The command is the exact one (it may set ``HF_TOKEN=...``): the file is made 0600 (its folder 0700 when
    created here)."""
    path = path or command_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file may have been made with the default umask
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n")
    return path
