"""`specdash locate` prints the XDG locations (and honours XDG_* and SPECDASH_* overrides)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def locate(*args: str, env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "SPECDASH_"))}
    return subprocess.run([sys.executable, "-m", "specdash", "locate", *args], capture_output=True, text=True,
                          timeout=60, env={**clean, **env})


def test_locate_prints_every_location_under_xdg_dirs(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "st")}
    result = locate(env=env)
    assert result.returncode == 0
    rows = dict(line.split(":", 1) for line in result.stdout.splitlines())
    rows = {k: v.strip() for k, v in rows.items()}
    assert rows == {
        "config file": f"{tmp_path}/cfg/specdash/config.yaml",
        "themes dir": f"{tmp_path}/cfg/specdash/themes",
        "state dir": f"{tmp_path}/st/specdash",
        "sessions dir": f"{tmp_path}/st/specdash/sessions",
        "runs dir": f"{tmp_path}/st/specdash/runs",
        "bench results dir": f"{tmp_path}/st/specdash/bench",
        "screenshots dir": f"{tmp_path}/st/specdash/screenshots",
    }
    assert not (tmp_path / "st").exists()  # locating creates nothing


def test_locate_one_path_for_scripts_and_overrides(tmp_path):
    env = {"SPECDASH_STATE_DIR": str(tmp_path / "mine"), "SPECDASH_CONFIG": str(tmp_path / "c.yaml")}
    assert locate("sessions", env=env).stdout == f"{tmp_path}/mine/sessions\n"
    assert locate("config", env=env).stdout == f"{tmp_path}/c.yaml\n"


def test_locate_unknown_name_is_usage_error(tmp_path):
    result = locate("nowhere", env={})
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_locate_json_is_one_object_of_paths(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "SPECDASH_STATE_DIR": str(tmp_path / "st")}
    result = locate("--json", env=env)
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "config": f"{tmp_path}/cfg/specdash/config.yaml",
        "themes": f"{tmp_path}/cfg/specdash/themes",
        "state": f"{tmp_path}/st",
        "sessions": f"{tmp_path}/st/sessions",
        "runs": f"{tmp_path}/st/runs",
        "bench": f"{tmp_path}/st/bench",
        "screenshots": f"{tmp_path}/st/screenshots",
    }
    assert json.loads(locate("themes", "--json", env=env).stdout) == {"themes": f"{tmp_path}/cfg/specdash/themes"}
