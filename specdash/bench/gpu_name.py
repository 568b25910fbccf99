"""The GPU a benchmark of a followed server ran on, as far as the GPU sampler shows it, for the run file's
``effective_config["gpu_name"]`` (what ``specdash bench list`` groups comparable results by).

Stated only when it is sure: every GPU on the host has the same name, or every GPU the server's processes hold
memory on has the same name. A host with GPUs of several kinds where the server's GPUs are not seen, or a server
spread over GPUs of several kinds, gives None ("unknown" stays unknown). Pure function.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from specdash.gpu.model import GpuInfo


def run_gpu_name(gpus: Sequence[GpuInfo], server_gpu_indexes: Iterable[int] = ()) -> str | None:
    """The name of the GPU(s) a benchmark ran on (``"NVIDIA H100 80GB HBM3"``), or None when not known.

    ``gpus``: the host's GPUs (a sampler snapshot); ``server_gpu_indexes``: the GPUs on which the benchmarked
    server's processes hold memory (empty when not seen)."""
    names = {g.index: g.name.strip() for g in gpus if g.name and g.name.strip()}
    if not names or len(names) < len(gpus):  # a GPU whose name was not read: not sure
        return None
    kinds = set(names.values())
    if len(kinds) == 1:
        return next(iter(kinds))
    used = {names[i] for i in server_gpu_indexes if i in names}
    return next(iter(used)) if len(used) == 1 else None
