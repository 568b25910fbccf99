"""The domain core never imports Textual (so headless commands stay fast and the core is testable alone)."""

import pkgutil
import subprocess
import sys

import pytest

import specdash

CORE_PACKAGES = ("hosts", "sglang", "logs", "gpu", "bench", "session", "server", "config")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(specdash.__path__, "specdash."):
        top = info.name.split(".")[1]
        if top in CORE_PACKAGES or info.name in ("specdash.cli", "specdash.paths"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", core_modules())
def test_core_module_does_not_import_textual(module):
    code = (f"import sys, importlib; importlib.import_module({module!r}); "
            "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')); "
            "print(','.join(bad)); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{module} pulls in Textual: {result.stdout.strip()} {result.stderr[-500:]}"
