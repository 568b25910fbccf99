"""A test double of the ``sglang`` package (tests only, never shipped).

It lets ``python3 -m sglang.launch_server ...`` run on a machine without a GPU: SGLang's flags, its start-up
log lines, its HTTP endpoints and ``sglang::`` worker processes that hold "GPU memory" in the fake nvidia-smi's
state file. Everything it does is scripted by a scenario file (see tests/double/README.md); it imports nothing
from specdash.
"""



def _scenario_version() -> str:
    """The SGLang version this double pretends to be: ``SGLANG_DOUBLE_VERSION`` when set, else the scenario's
    ``version`` (default 0.5.0rc0, the built-in scenario's), so ``python -c 'import sglang;
    print(sglang.__version__)'`` answers like a release, and as ``/get_server_info`` does."""
    import os

    if os.environ.get("SGLANG_DOUBLE_VERSION"):
        return os.environ["SGLANG_DOUBLE_VERSION"]
    path = os.environ.get("SGLANG_DOUBLE_SCENARIO")
    if path:
        try:
            import yaml

            with open(path, encoding="utf-8") as handle:
                version = (yaml.safe_load(handle) or {}).get("version")
            if version:
                return str(version)
        except Exception:  # a broken scenario is reported by launch_server itself
            pass
    return "0.5.0rc0"


__version__ = _scenario_version()
