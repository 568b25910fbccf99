"""The SGLang test double's harness (tests/double/harness.py), loaded once for every test module that needs it.

It is loaded by path: tests/double must not be on the test process's sys.path (it holds a package named sglang).
"""

from __future__ import annotations

import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location(
    "sglang_double_harness", pathlib.Path(__file__).parent.parent / "double" / "harness.py")
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)


def host_env(tmp_path, scenario: str) -> dict[str, str]:
    """The double's environment (:func:`harness.double_env`: the fake nvidia-smi is on its PATH)."""
    return harness.double_env(tmp_path, scenario)


def empty_log(tmp_path) -> str:
    """An empty ``--log`` file for an app under test that launches its own server: with a log to follow, the app
    does not discover (and offer a chooser for) the other SGLang servers running on this machine, e.g. another test
    run's doubles. The launch then switches the log pane to the run's own log, as it does for a user."""
    path = pathlib.Path(tmp_path) / "before-launch.log"
    path.write_text("")
    return str(path)
