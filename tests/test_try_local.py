"""README's "try the live loop without a GPU" recipe (``tools/try_local.sh``): its environment, as a user's shell
gets it, runs SGLang's double and shows its GPU processes through the fake nvidia-smi."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

from support.double import harness
from support.gpu import poll_until, reap_group

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "try_local.sh"


def recipe_env(tmp_path: pathlib.Path, scenario: str) -> dict[str, str]:
    """The environment a shell has after ``eval "$(tools/try_local.sh --print-env SCENARIO)"``."""
    base = {**os.environ, "SPECDASH_TRY_DIR": str(tmp_path), "PYTHON": sys.executable}
    lines = subprocess.run(["bash", str(SCRIPT), "--print-env", scenario], env=base, capture_output=True,
                           text=True, timeout=60, check=True).stdout
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    out = subprocess.run(["bash", "-c", 'eval "$1"; exec "$2" -c "$3"', "_", lines, sys.executable, dump],
                         env=base, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_readme_names_the_recipe():
    readme = (REPO / "README.md").read_text()
    assert "tools/try_local.sh" in readme and SCRIPT.stat().st_mode & 0o111


def test_recipe_env_launches_the_double_and_ps_sees_its_server(tmp_path):
    env = recipe_env(tmp_path, "fast")
    assert shutil.which("nvidia-smi", path=env["PATH"]) == str(REPO / "tests" / "fakes" / "bin" / "nvidia-smi")
    assert env["XDG_STATE_HOME"] == str(tmp_path / "state")
    port = harness.free_port()
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen(["bash", "-c", harness.launch_command(port)], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def server_rows() -> list[dict]:
            out = subprocess.run([sys.executable, "-m", "specdash", "ps", "local", "--json"], env=env,
                                 capture_output=True, text=True, timeout=60)
            return [p for p in json.loads(out.stdout)["processes"]
                    if p["class"] == "server" and p["pgid"] == proc.pid and (p["used_mib"] or 0) > 0]

        assert poll_until(lambda: bool(server_rows()), timeout_s=60), (tmp_path / "server.log").read_text()[-2000:]
        text = subprocess.run([sys.executable, "-m", "specdash", "ps", "local"], env=env, capture_output=True,
                              text=True, timeout=60).stdout
        assert "sglang::scheduler" in text and "NVIDIA H100 80GB HBM3" in text
    finally:
        reap_group(proc.pid)
        proc.wait()
