"""One key, one action: no pane key shadows an app-level key (the app's ``o`` goes back to the --log file; the
benchmarks pane imports a results file with ``i``), in the help screen, the README and a remapped keymap."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from specdash.app.keymap import binding_table, key_clashes
from specdash.app.replay import ReplayApp
from specdash.session.reader import read_session

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "tests" / "data" / "session" / "story.yaml"


def test_no_pane_key_is_also_an_app_key():
    assert key_clashes() == []
    table = binding_table()
    assert table["app.log_file"][0] == "o" and table["bench.open"][0] == "i"


def test_a_remap_onto_an_app_key_is_refused_in_one_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("keymap:\n  log.filter: slash\n  bench.open: o\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SPECDASH_")}
    out = subprocess.run([sys.executable, "-m", "specdash", "config"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, env={**clean, "SPECDASH_CONFIG": str(path)})
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert f"{path}:3: keymap.bench.open: 'o' is also the key of app.log_file (Back to --log)" in out.stderr
    assert key_clashes({"app.log_file": "b"}) == [("b", "bench.run", "app.log_file")]


def test_readme_key_list_names_both_keys():
    readme = (REPO / "README.md").read_text()
    keys = readme[readme.index("## Keys"):readme.index("### Binding ids")]
    assert "`o` back to the `--log` file" in keys and "`i` import a file of pasted benchmark output" in keys
    assert "`bench.open` (i)" in readme and "`app.log_file` (o)" in readme


async def test_in_the_benchmarks_pane_o_is_the_apps_and_i_opens_the_file_box():
    app = ReplayApp(read_session(STORY), 1.0, start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f4")
        await app.deferred_panes_ready()
        bench = app.bench_pane
        app.set_focus(bench)
        await pilot.pause()
        box = bench.query_one("#bench-open-path")
        await pilot.press("o")  # the app's key: no --log file in a replay, and the pane's box stays closed
        await pilot.pause()
        assert not box.display
        said = [str(n.message) for n in app._notifications]
        assert any("--log" in text or "ollowing" in text for text in said), said
        await pilot.press("f1")
        await pilot.pause()
        body = str(app.screen.query_one("#help-body").render())
        assert re.search(r"\bi\s+Import results file", body) and re.search(r"\bo\s+Back to --log", body)
        assert not re.search(r"\bo\s+(Open|Import) results file", body)
        await pilot.press("escape")
        app.set_focus(bench)
        await pilot.press("i")
        await pilot.pause()
        assert box.display and app.focused is box


def _config_error(tmp_path, keymap: str) -> subprocess.CompletedProcess:
    path = tmp_path / "config.yaml"
    path.write_text("keymap:\n" + keymap)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SPECDASH_")}
    return subprocess.run([sys.executable, "-m", "specdash", "config"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**clean, "SPECDASH_CONFIG": str(path)})


def test_a_remap_onto_another_app_key_is_refused(tmp_path):
    """``server.stop: l`` used to be accepted: l then both launched and stopped in the hints, and ran only one of
    them; two keys of one pane or one dialog, and ``?`` written for ``question_mark``, clash the same way."""
    out = _config_error(tmp_path, "  server.stop: l\n")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "config.yaml:2: keymap.server.stop: 'l' is also the key of server.launch (Launch)" in out.stderr
    assert key_clashes({"server.stop": "?"}) == [("question_mark", "server.stop", "app.help")]
    out = _config_error(tmp_path, "  server.stop: '?'\n")  # named as written, not as Textual's key name
    assert "keymap.server.stop: '?' is also the key of app.help (Help)" in out.stderr, out.stderr
    assert key_clashes({"log.follow": "n"}) == [("n", "log.follow", "log.next_hit")]
    assert key_clashes({"confirm.yes": "escape"}) == [("escape", "confirm.no", "confirm.yes")]
    assert key_clashes({"server.stop": "l", "server.launch": "x"}) == []  # a swap is fine


def test_a_key_name_textual_never_matches_is_refused(tmp_path):
    """``F12`` (as the hints write F-keys) or ``Ctrl+x`` was accepted and the hints named it, but Textual's key
    names are lower case: the key never fired."""
    out = _config_error(tmp_path, "  app.screenshot: F12\n")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert ("config.yaml:2: keymap.app.screenshot: 'F12' is not a key name: Textual's are lower case ('f12')"
            in out.stderr)
    out = _config_error(tmp_path, "  app.help: 'f1, '\n  server.stop: Ctrl+x\n")
    assert out.returncode == 2 and "keymap.app.help: an empty key name" in out.stderr, out.stderr
    out = _config_error(tmp_path, "  server.stop: ctrl+x\n  server.restart: R\n  app.screenshot: f11\n")
    assert out.returncode == 0, out.stderr
