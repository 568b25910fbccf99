"""Write docs/screenshot.svg: the shipped demo session replayed to the moment the crashed server's orphan holds
GPU memory (the last GPU sample before the recorded kill, found in the session, so a re-recorded demo needs no new
time), at 160x48. Run from the repo root: ``python tools/make_screenshot.py [SECONDS]``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from specdash.app.replay import ReplayApp
from specdash.session.events import GpuEvent, KillEvent
from specdash.session.reader import read_session

REPO = Path(__file__).resolve().parent.parent


def orphan_moment(log) -> float:
    """Session seconds just after the last GPU sample before the first recorded kill (the orphan still holds its
    memory there); 66.0 for a session without a kill."""
    kill = next((e.t for e in log.events if isinstance(e, KillEvent)), None)
    if kill is None:
        return 66.0
    samples = [e.t for e in log.events if isinstance(e, GpuEvent) and e.t < kill]
    return min(samples[-1] + 0.1, kill - 0.05) if samples else kill - 0.05


async def main(at_s: float | None) -> None:
    log = read_session(REPO / "sessions" / "demo-eagle3-field-reports.yaml.gz")
    at_s = orphan_moment(log) if at_s is None else at_s
    app = ReplayApp(log, 1.0, start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.5)
        app.player.seek(at_s)
        await pilot.pause(2.0)
        await pilot.press("f2")
        await pilot.pause(1.0)
        out = REPO / "docs" / "screenshot.svg"
        app.save_screenshot(filename=out.name, path=str(out.parent))
        print(out)


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else None))
