"""Replay a session headless with each shipped theme and check what a user would see; used by the wheel check.

Usage: ``python tools/headless_replay.py SESSION_FILE`` with the specdash to check importable (e.g. the python of a
fresh venv the wheel was installed in, run from outside the checkout). For each theme shipped in the package it
opens the replay paused, jumps to the first finding (``}``), and checks that the theme is the one asked for, that
the replay moved and that the screen is drawn in the theme's background colour. Prints one line per theme; exit 1
on the first failure.
"""

from __future__ import annotations

import asyncio
import sys


async def _replay(path: str, theme: str) -> str:
    from specdash.app.replay import ReplayApp
    from specdash.app.themes import load_themes
    from specdash.session.reader import read_session

    app = ReplayApp(read_session(path), 1.0, start_paused=True, theme=theme)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        if app.theme != theme:
            raise SystemExit(f"{theme}: the app runs theme {app.theme!r}")
        await pilot.press("right_curly_bracket")  # } : the first finding
        for _ in range(200):
            if app.player.position_s > 0 and app.last_event:
                break
            await pilot.pause(0.05)
        else:
            raise SystemExit(f"{theme}: '}}' did not move the replay to a finding")
        background = str(load_themes()[theme].background).lower()
        screen = app.export_screenshot().lower()
        if background not in screen:
            raise SystemExit(f"{theme}: the screen is not drawn in the theme's background {background}")
        return f"{theme}: replay at {app.player.position_s:.1f} s, {app.last_event}"


def main(argv: list[str]) -> int:
    from specdash.app.themes import shipped_theme_names

    if len(argv) != 1:
        sys.stderr.write("usage: headless_replay.py SESSION_FILE\n")
        return 2
    names = shipped_theme_names()
    if not names:
        sys.stderr.write("no shipped themes in the installed package\n")
        return 1
    for theme in names:
        print(asyncio.run(_replay(argv[0], theme)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
