"""Import-only stand-in for ``sgl_kernel`` (SGLang's CUDA kernel package) in the CPU-only 0.5.5 oracle venv.

SGLang 0.5.5 imports ``sgl_kernel`` at module level on the path from ``sglang.srt.server_args`` to argument
resolution, but never calls a kernel while parsing and resolving arguments. This module (and any ``sgl_kernel.*``
submodule) answers every attribute with a placeholder that raises if it is ever *called*, so a resolution that did
reach a kernel would show up as an error in the oracle's output instead of passing silently.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.3.16.post5"


class _Placeholder:
    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"sgl_kernel stand-in: {self._name} was called during argument resolution")

    def __getattr__(self, item: str) -> _Placeholder:
        return _Placeholder(f"{self._name}.{item}")

    def __mro_entries__(self, bases):
        return (object,)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder(f"sgl_kernel.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("sgl_kernel."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda name: (_Placeholder(f"{spec.name}.{name}") if not name.startswith("__")
                                           else (_ for _ in ()).throw(AttributeError(name)))
        return module

    def exec_module(self, module):
        return None


__path__: list[str] = []
sys.meta_path.insert(0, _Finder())
