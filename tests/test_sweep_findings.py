"""Findings of a depth sweep configuration's server, live, in a replay and in ``replay --summary``: they do not
advise "then try a depth sweep" (one runs), a deep configuration's low acceptance does not raise the draft/target
pairing toast, and the user's own server keeps both."""

from __future__ import annotations

from pathlib import Path

from support.pilot import wait_until

from specdash.app.replay import ReplayApp
from specdash.logs.analyzer import LogAnalyzer
from specdash.session.events import SWEEP_RESTARTED
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder
from specdash.session.summary import summary_lines

MINE, CHAIN_10, CHAIN_16 = "/srv/runs/mine/server.log", "/srv/runs/chain-10/server.log", "/srv/runs/chain-16/server.log"


def server_args(steps: int, draft_tokens: int) -> str:
    return (f"[2026-01-05 10:00:00] server_args=ServerArgs(model_path='/m', speculative_algorithm='EAGLE3', "
            f"speculative_num_steps={steps}, speculative_eagle_topk=1, speculative_num_draft_tokens={draft_tokens})")


def decode(second: int, accept: float) -> str:
    return (f"[2026-01-05 10:00:{second:02d}] Decode batch. #running-req: 4, #token: {100 + second}, token usage: "
            f"0.01, accept len: {accept:.2f}, cuda graph: True, gen throughput (token/s): 900.00, #queue-req: 0, ")


def write_session(path: Path) -> None:
    """The user's server (4 draft tokens, accept length 2.0: modest), then two sweep configurations (10 and 16
    draft tokens, 2.86), recorded as the console records them: a ``sweep restarted`` command before each sweep
    log, the findings as the live analysis raised them (with the sweep flag set for the sweep's logs)."""
    t = 0.0
    with Recorder(path, {"host": "h", "sglang_version": "0.5.6"}, timer=False) as rec:
        for source, steps, tokens, accept in ((MINE, 3, 4, 2.0), (CHAIN_10, 9, 10, 2.86), (CHAIN_16, 15, 16, 2.86)):
            sweep = source != MINE
            if sweep:
                rec.record("command", t=t, action=SWEEP_RESTARTED, command=f"python3 -m sglang.launch_server "
                           f"--speculative-num-draft-tokens {tokens}", pid=100, pgid=100, log_path=source)
            t = record_server(rec, t, source, steps, tokens, accept, sweep)


def record_server(rec: Recorder, t: float, source: str, steps: int, tokens: int, accept: float, sweep: bool) -> float:
    """A server's log (its server_args line, 14 decode lines at ``accept``) and the findings the live analysis
    raised on it (with the depth-sweep flag ``sweep``), recorded from ``t`` on as the console records them; returns
    the time of the last event."""
    raised: list = []
    analyzer = LogAnalyzer(on_finding=raised.append)
    analyzer.engine.in_depth_sweep = sweep
    lines = [server_args(steps, tokens)] + [decode(s, accept) for s in range(1, 15)]
    for i, text in enumerate(lines):
        t += 1.0
        analyzer.feed_many([text])
        rec.record("log", t=t, lines=[[i * 300, text]], source=source)
        for f in raised:
            rec.record("finding", t=t, code=f.kind, severity=f.severity, message=f.message,
                       detail=f.explanation, line=f.line, key=f.key)
        raised.clear()
    return t


def test_the_summary_gives_no_depth_sweep_advice_for_a_sweep_configuration(tmp_path):
    path = tmp_path / "s.yaml"
    write_session(path)
    text = "\n".join(summary_lines(read_session(path)))
    mine, chain_10, chain_16 = (text.split("sweep restarted")[i] for i in range(3))
    assert "acceptance modest: mean accept length 2.00 of a possible 4" in mine and "then try a depth sweep" in mine
    assert "acceptance modest: mean accept length 2.86 of a possible 10" in chain_10
    assert "low acceptance: accept length 2.86 of a possible 16" in chain_16
    for config in (chain_10, chain_16):
        assert "try a depth sweep" not in config and "likely mismatched" not in config, config
        assert "this server is one configuration of the depth sweep running now" in config, config


async def test_a_replayed_sweep_configuration_raises_no_pairing_toast_and_no_sweep_advice(tmp_path):
    path = tmp_path / "s.yaml"
    write_session(path)
    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: CHAIN_16 in str(app.log_pane.border_title)
                         and any(f.kind == "low_acceptance" for f in app.log_pane.findings),
                         what="chain-16's low acceptance finding",
                         state=lambda: [f.message for f in app.log_pane.findings])
        await pilot.pause(0.3)
        low = next(f for f in app.log_pane.findings if f.kind == "low_acceptance")
        assert "one configuration of the depth sweep running now" in low.explanation
        assert "likely mismatched" not in low.explanation
        toasts = [str(n.message) for n in app._notifications]
        assert not any("Low acceptance" in message for message in toasts), toasts
        # the builder still shows no sweep configuration's command (a sweep never changes it)
        assert "--speculative-num-draft-tokens 16" not in (app.builder_pane.command if app.builder_pane else "")
