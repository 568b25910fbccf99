"""What makes two benchmark results comparable: the same model, workload, API, concurrency, request rate, output
length, GPU and measuring tool. Only results that agree on these are ranked against each other (the speculative
configuration is what a ranking compares, so it is not part of the key).

Works on a stored specdash run (:class:`~specdash.bench.results.RunResult`: ``settings`` and ``effective_config``)
and an imported record (:class:`~specdash.bench.imported.record.ImportedRecord`: what the pasted text states;
most pasted outputs do not name the model or the GPU, which then stay unknown).
"""

from __future__ import annotations

import math
from typing import Any

#: The request rate of a run that sends every request at once (bench_serving's ``--request-rate inf``).
ALL_AT_ONCE = float("inf")

#: The fields of :func:`comparable_key`, in the order they are shown.
FIELDS: tuple[str, ...] = ("model", "workload", "api", "concurrency", "request rate", "output length", "GPU",
                           "measured by")


def _first(mapping: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = mapping.get(key)
        if value is not None and value != "":
            return value
    return None


def comparable_key(item: object) -> dict[str, Any]:
    """``{field: value or None}`` for each of :data:`FIELDS` (None = not stated). Never raises for a stored item
    of either kind; other objects give all-None fields."""
    from specdash.bench.imported.record import ImportedRecord
    from specdash.bench.results import RunResult

    if isinstance(item, RunResult):
        s, c = dict(item.settings or {}), dict(item.effective_config or {})
        values = {
            "model": _first(s, "model") or _first(c, "served_model_name", "model_path"),
            "workload": _first(s, "workload"),
            "api": _first(s, "api"),
            "concurrency": _first(s, "concurrency") or _first(c, "concurrency"),
            # specdash's runner sends every request at once when no rate is set (BenchSettings.request_rate None):
            # bench_serving's "inf"
            "request rate": (ALL_AT_ONCE if "request_rate" in s and s["request_rate"] is None
                             else _first(s, "request_rate")),
            "output length": _first(s, "output_len"),
            "GPU": _first(c, "gpu_name", "gpu"),
            "measured by": "specdash bench",
        }
    elif isinstance(item, ImportedRecord):
        s, c = dict(item.settings or {}), dict(item.config or {})
        values = {
            "model": _first(s, "model_id", "model", "served_model_name"),
            "workload": _first(s, "dataset_name", "workload"),
            "api": _first(s, "backend", "api"),
            "concurrency": _first(c, "concurrency") or _first(s, "batch_size"),
            "request rate": _first(s, "request_rate"),
            "output length": _first(s, "output_len"),
            "GPU": _first(s, "gpu_name", "gpu"),
            "measured by": item.tool,
        }
    else:
        values = {}
    return {field: _plain(values.get(field)) for field in FIELDS}


def _plain(value: Any) -> Any:
    """A hashable, JSON-safe value (numbers compare as numbers: 8 and 8.0 are the same concurrency)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else str(float(value))  # "inf": as stated, strict JSON
    return str(value)


def group_text(key: dict[str, Any]) -> str:
    """One line naming a group: the stated fields, then the unknown ones (``"model m, workload chat, ...;
    not stated: GPU"``)."""
    def shown(field: str, value: Any) -> str:
        if field == "request rate" and value == "inf":
            return "inf (all at once)"
        return f"{value:g}" if isinstance(value, float) else str(value)

    stated = [f"{field} {shown(field, key[field])}" for field in FIELDS if key.get(field) is not None]
    unknown = [field for field in FIELDS if key.get(field) is None]
    text = ", ".join(stated) or "nothing stated"
    if unknown:
        text += "; not stated: " + ", ".join(unknown)
    return text
