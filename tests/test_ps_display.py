"""`specdash ps` prints process names from the host without the terminal escapes, controls and bidi overrides they
may hold (a process can name itself anything)."""

from __future__ import annotations

from support.gpu import FakeGpuState
from support.gpu import run_specdash as specdash


def test_ps_prints_hostile_process_names_clean(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    state.add_process(4_100_001, 0, 900, name="py\x1b]0;pwned\x07\x1b[2Jthon\u202e3\x9b31m", keep_when_dead=True)
    out = specdash(state, "ps", "local")
    assert out.returncode == 0, out.stderr
    for bad in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert bad not in out.stdout
    assert "4100001" in out.stdout and " python3\n" in out.stdout  # the name, shown clean
