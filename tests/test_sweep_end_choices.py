"""The end of a depth sweep as the user reads it in the bench pane: what the end dialog offers on y when nothing can
be concluded (only the baseline stable, or the fastest stable config slower than the baseline), the keys its
buttons name when config.yaml remaps them, the line under the chart after a sweep is cancelled, and which restart
the kept / restored command is (what the session records)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Button, Static

sys.path.insert(0, str(Path(__file__).parent))
from support.pilot import screen_text, wait_until  # noqa: E402
from support.sweep import BASE, TIMINGS, FakeLifecycle  # noqa: E402

from specdash.app.bench import BenchPane  # noqa: E402
from specdash.app.bench.end_dialog import MORE, RESTORE, SweepEndScreen  # noqa: E402
from specdash.app.gpus.kill_modal import KillConfirmScreen  # noqa: E402
from specdash.app.modals.confirm import ConfirmScreen  # noqa: E402
from specdash.app.modals.host_key import HostKeyScreen  # noqa: E402
from specdash.bench.stats import repeat_spread  # noqa: E402
from specdash.bench.sweep import (  # noqa: E402
    PointResult,
    SweepDefinition,
    SweepPoint,
    SweepResult,
    command_for_point,
    default_sweep,
)
from specdash.session.events import SWEEP_KEPT, SWEEP_RESTORED  # noqa: E402


class PaneApp(App):
    """The bench pane alone, with config.yaml's keymap applied as the console applies it."""

    def __init__(self, keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.keymap_overrides = dict(keymap or {})
        if keymap:
            self.set_keymap(keymap)

    def compose(self) -> ComposeResult:
        yield BenchPane(None)


def point(p: SweepPoint, values: list[float], se: float | None = None) -> PointResult:
    spread = repeat_spread(values, [se] * len(values) if se is not None else None)
    return PointResult(p, "unstable" if spread.unstable else "ok", command=command_for_point(BASE, p),
                       throughput=spread)


def only_baseline_stable() -> SweepResult:
    """A busy machine's sweep: the baseline's repeats agree, every speculative config's disagree, all faster."""
    base, c16, c10, c5 = default_sweep().points
    return SweepResult(default_sweep(), BASE, {}, "k", "now", finished=True, points=[
        point(base, [1518, 1600, 1586], se=20), point(c16, [1716, 2159, 2186], se=20),
        point(c10, [1744, 2171, 1675], se=20), point(c5, [1705, 2107, 2150], se=20)])


def labels(app) -> dict[str, str]:
    return {str(b.id): str(b.label) for b in app.screen.query(Button)}


async def end_dialog(pilot, result: SweepResult) -> BenchPane:
    pane = pilot.app.query_one(BenchPane)
    pane.show_sweep(result)
    pane._ask_keep_or_restore(result, BASE)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SweepEndScreen)
                     and pilot.app.screen.query("#confirm-body"), what="the end-of-sweep dialog")
    return pane


async def test_only_the_baseline_stable_offers_measure_again_not_keep_baseline(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = await end_dialog(pilot, only_baseline_stable())
        screen = app.screen
        # before: "Keep baseline?" with "Keep baseline (y)": y restarted the server without speculation
        assert screen.question == "Nothing to keep yet: measure the unstable configurations again?"
        assert labels(app) == {"yes": "Measure again (y)", "no": "Restore my command (n)"}
        assert screen.yes == ("Measure again", MORE) and screen.no == ("Restore my command", RESTORE)
        body = str(screen.query_one("#confirm-body", Static).render())
        assert "No configuration to keep (only the baseline was stable (1568.0 output tokens/s); the repeats of " \
               "chain-16 (1716-2186), chain-10 (1675-2171) and chain-5 (1705-2150 output tokens/s) disagree (the " \
               "baseline's: 1518-1600); every repeat of them was faster than every baseline repeat" in \
               " ".join(body.split("\n"))
        assert "leave speculation off" not in body and "Keep" not in body
        line = str(pane.query_one("#bench-recommendation", Static).render())
        assert line.startswith("no recommendation: only the baseline was stable")
        assert "leave speculation off" not in line


async def test_a_config_slower_than_an_unstable_baseline_is_not_offered_to_keep(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    base, _, c10, _ = default_sweep().points
    result = SweepResult(default_sweep(), BASE, {}, "k", "now", finished=True,
                         points=[point(base, [2644, 2136, 2128]), point(c10, [2150, 2155, 2160])])
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await end_dialog(pilot, result)
        # before: "Keep chain-10?" with "Keep chain-10 (y)" for a config at 0.94x the baseline's mean
        assert app.screen.question == "Nothing to keep yet: measure the unstable configurations again?"
        assert labels(app) == {"yes": "Measure again (y)", "no": "Restore my command (n)"}
        body = " ".join(str(app.screen.query_one("#confirm-body", Static).render()).split("\n"))
        assert "the fastest stable is chain-10 (10 draft tokens, 2155.0 output tokens/s, 0.94x a baseline that was " \
               "unstable (not a reliable ratio)); but it is slower than the baseline's 2302.7 output tokens/s" in body


async def test_dialog_buttons_and_texts_name_the_remapped_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    keymap = {"confirm.yes": "Y", "confirm.no": "N", "sweep.measure_again": "a", "gpus.kill_confirm": "Y",
              "hostkey.trust": "T"}
    base, _, _, c5 = default_sweep().points
    # chain-5 stable and faster; the baseline unstable: keep (y), restore (n) and measure again (m) are offered
    result = SweepResult(default_sweep(), BASE, {}, "k", "now", finished=True,
                         points=[point(base, [1600, 1400, 1390]), point(c5, [2100, 2105, 2110])])
    app = PaneApp(keymap)
    async with app.run_test(size=(160, 48)) as pilot:
        await end_dialog(pilot, result)
        # before: "Measure again (m)", "Keep chain-5 (y)", "Restore my command (n)" - keys that did nothing
        assert labels(app) == {"more": "Measure again (a)", "yes": "Keep chain-5 (Y)", "no": "Restore my command (N)"}
        body = " ".join(str(app.screen.query_one("#confirm-body", Static).render()).split("\n"))
        assert "Measure again (a): 3 new repeats of baseline" in body
        assert "Keep (Y): the builder gets chain-5's command" in body
        assert "Restore (N): the server is restarted with your original command." in body
        assert "(y)" not in body and "(m)" not in body and "(n)" not in body
        app.pop_screen()
        await pilot.pause()
        answers: list[bool | None] = []
        app.push_screen(ConfirmScreen("Stop the server?", "details", "Stop"), answers.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query(Button),
                         what="the stop dialog")
        assert labels(app) == {"yes": "Stop (Y)", "no": "Cancel (N)"}
        assert "Stop (Y)" in screen_text(app)
        await pilot.press("y")  # no longer its key
        await pilot.pause()
        assert answers == [] and isinstance(app.screen, ConfirmScreen)
        await pilot.press("Y")
        await wait_until(pilot, lambda: answers == [True], what="the remapped yes")
        # the kill and host-key dialogs name their bound keys the same way
        app.push_screen(KillConfirmScreen([], [], 15.0))
        await wait_until(pilot, lambda: isinstance(app.screen, KillConfirmScreen) and app.screen.query(Button),
                         what="the kill dialog")
        assert labels(app) == {"kill": "Kill (Y)", "cancel": "Cancel (esc)"}
        app.pop_screen()
        app.push_screen(HostKeyScreen("gpu-box", 22, "ssh-ed25519", "SHA256:abc", str(tmp_path / "known_hosts")))
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen) and app.screen.query(Button),
                         what="the host-key dialog")
        assert labels(app) == {"trust": "Trust (T)", "cancel": "Cancel (esc)"}


async def test_a_cancelled_sweep_says_so_under_the_chart_and_names_a_failed_config(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    fake = FakeLifecycle(hang_on_call=2)  # chain-10's restart never finishes: the sweep is cancelled there

    async def restart(command: str, action: str | None = None) -> str:
        if "--speculative" not in command:  # the baseline crashes (as with a command SGLang rejects)
            raise RuntimeError("server did not become ready: crashed (exit status 2)")
        return await fake.restart(command, action)

    try:
        app = PaneApp({"bench.sweep": "W"})
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            pane.bench_overrides = {"num_requests": 4, "concurrency": 2, "output_len": 9, "warmup_requests": 0,
                                    "api": "generate"}
            pane.restart_server = restart
            pane.base_command = BASE
            pane.sweep_definition = SweepDefinition((SweepPoint("baseline", speculative=False),
                                                     SweepPoint("chain-5", True, None, 4, 1, 5),
                                                     SweepPoint("chain-10", True, None, 9, 1, 10)), repeats=1)
            pane.action_sweep()
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the sweep's plan")
            await pilot.press("y")
            line = pane.query_one("#bench-recommendation", Static)
            await wait_until(pilot, lambda: len(fake.commands) == 2 and pane.sweeping is not None
                             and pane.sweeping[2] == "chain-10", timeout_s=60, what="chain-10's restart",
                             state=lambda: pane.status)
            # while it runs the failed baseline is named, not counted as measured (before: "2 of 3 ... so far")
            assert str(line.render()) == ("sweep running: 1 of 3 configs measured so far (baseline failed) - "
                                          "the recommendation comes when it ends")
            pane.cancel_sweep()  # what x / r do once the user confirmed
            await pilot.pause()
            # before: the line kept "sweep running: 2 of 3 configs measured so far - the recommendation comes ..."
            assert str(line.render()) == ("sweep cancelled: 1 of 3 configs measured (baseline failed) - no "
                                          "recommendation from part of a sweep; W resumes it")
            await asyncio.sleep(0.2)
            await pilot.pause()
            assert str(line.render()).startswith("sweep cancelled: 1 of 3")  # nothing writes "running" over it
    finally:
        fake.close()


async def test_the_restart_at_the_end_of_a_sweep_is_the_kept_or_restored_command_not_a_sweep_config(tmp_path,
                                                                                                     monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    fake = FakeLifecycle(timings={**TIMINGS, 4: TIMINGS[5]})  # BASE: 4 draft tokens
    base, _, _, c5 = default_sweep().points
    result = SweepResult(default_sweep(), BASE, {}, "k", "now", finished=True,
                         points=[point(base, [1000, 1001, 1002]), point(c5, [2100, 2105, 2110])])
    try:
        app = PaneApp()
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            pane.restart_server = fake.restart
            await end_dialog(pilot, result)
            await pilot.press("y")  # keep chain-5
            await wait_until(pilot, lambda: fake.actions == [SWEEP_KEPT] and "runs the chosen command" in pane.status,
                             timeout_s=60, what="the kept config's restart", state=lambda: pane.status)
            assert fake.commands == [command_for_point(BASE, c5)]
            await end_dialog(pilot, result)
            await pilot.press("n")  # restore my command
            await wait_until(pilot, lambda: fake.actions == [SWEEP_KEPT, SWEEP_RESTORED]
                             and "runs the chosen command" in pane.status, timeout_s=60,
                             what="the user's command's restart", state=lambda: pane.status)
            assert fake.commands[-1] == BASE
    finally:
        fake.close()


async def test_a_failed_baseline_is_named_in_the_end_dialog(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    base, c16, c10, c5 = default_sweep().points
    error = "restart failed: server did not become ready: crashed: launch_server.py: error: unrecognized arguments: x"
    result = SweepResult(default_sweep(), BASE, {}, "k", "now", finished=True, points=[
        PointResult(base, "failed", error=error), point(c16, [2186, 2190, 2188]), point(c10, [2171, 2175, 2173]),
        point(c5, [2772, 2770, 2774])])
    async with PaneApp().run_test(size=(160, 48)) as pilot:
        await end_dialog(pilot, result)
        body = " ".join(str(pilot.app.screen.query_one("#confirm-body", Static).render()).split("\n"))
        # before: only "chain-5 ... is the fastest stable config", nothing about the baseline that never ran
        assert f"Failed, not measured: baseline ({error})" in body
        assert "The baseline (no speculation) was not measured: whether speculation is faster here is unknown." in body


async def test_in_the_nothing_to_keep_dialog_m_measures_again_too(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    async with PaneApp().run_test(size=(160, 48)) as pilot:
        pane = await end_dialog(pilot, only_baseline_stable())
        asked: list[str] = []
        monkeypatch.setattr(pane, "measure_unstable_again", lambda result, original: asked.append("again"))
        await pilot.press("m")  # the end dialog's measure-again key (before: it did nothing in this dialog)
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, SweepEndScreen), what="the dialog answered")
        assert asked == ["again"]
