"""A test double of the ``sglang`` package (tests only, never shipped).

It lets ``python3 -m sglang.launch_server ...`` run on a machine without a GPU: SGLang's flags, its start-up
log lines, its HTTP endpoints and ``sglang::`` worker processes that hold "GPU memory" in the fake nvidia-smi's
state file. Everything it does is scripted by a scenario file (see tests/double/README.md); it imports nothing
from specdash.
"""

__version__ = "0.0.0+double"
