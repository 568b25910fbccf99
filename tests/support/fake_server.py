"""A stand-in SGLang server for discovery tests: a real process whose command line names ``sglang.launch_server``
(the argv of ``python -c``), which prints one line and sleeps. Started by the ``started`` fixture (tests/conftest.py)
in its own session and killed by process group at the end of the test."""

from __future__ import annotations

import sys

FAKE_SERVER = [sys.executable, "-c", "import sys, time; print('hello', flush=True); time.sleep(60)",
               "-m", "sglang.launch_server", "--model-path", "discover-test-model"]
