"""Low acceptance in the log points the user at the draft/target pairing check (the field report's real cause)."""

from __future__ import annotations

from pathlib import Path

from support.gpu import FakeGpuState
from support.pilot import wait_until

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

DEMO = (Path(__file__).resolve().parent.parent / "sessions" / "demo-server.log").read_text()


async def test_low_acceptance_finding_points_at_pairing(tmp_path):
    # the same server at depth 16 (steps 15): accept length ~1.6 of 16 is far too low
    text = DEMO.replace("speculative_num_steps=1,", "speculative_num_steps=15,").replace(
        "speculative_num_draft_tokens=2,", "speculative_num_draft_tokens=16,")
    log = tmp_path / "server.log"
    log.write_text(text)
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    app = SpecdashApp(LocalHost(env=state.env()), log_path=str(log), gpu_interval_s=1.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: any(f.kind == "low_acceptance" for f in app.log_pane.analyzer.findings),
                         what="low acceptance finding")
        await wait_until(pilot, lambda: any("pairing" in n.message for n in app._notifications),
                         what="pairing notice")
