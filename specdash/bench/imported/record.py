"""One benchmark result read from pasted text: what the tool printed, as the fields a specdash run stores.

An :class:`ImportedRecord` holds only what the text states. ``metrics`` uses :class:`RunResult`'s names and units
(``output_tokens_per_s``, ``requests_per_s``, ``duration_s``, ``completed``, ``errors``, ``total_output_tokens``,
``accept_length``) plus the latency statistics as ``"<metric>_ms.<stat>"`` (metric ``ttft``, ``tpot``, ``itl``,
``e2e``; stat ``mean``, ``p50``, ``p90``, ``p95``, ``p99``, ``max``, ``std``); ``config`` uses the effective-config
keys of a run (``speculative_num_steps``, ``speculative_eagle_topk``, ``speculative_num_draft_tokens``,
``speculative_algorithm``, ``cuda_graph``, ``attention_backend``, ``concurrency``). A key that is absent is
unknown: :meth:`ImportedRecord.to_run_dict` writes it as ``None`` and the text output as ``unknown``.
``raw`` keeps each value as pasted (its decimals tell how much rounding a recomputation must allow).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

#: The configuration keys every imported record reports, known or unknown.
CONFIG_KEYS: tuple[str, ...] = (
    "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
    "cuda_graph", "attention_backend", "concurrency",
)
#: Short names for the depth keys in one-line labels.
DEPTH_LABELS = (("speculative_num_steps", "steps"), ("speculative_eagle_topk", "topk"),
                ("speculative_num_draft_tokens", "draft tokens"))
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2e")
LATENCY_STATS = ("mean", "p50", "p90", "p95", "p99", "max", "std")

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """A finite decimal number written in ``text`` (no units), else None."""
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def half_unit(raw: str) -> float:
    """Half a unit of the last digit written in ``raw`` (``"1.58"`` → 0.005, ``"142"`` → 0.5): the most that
    rounding to that many decimals can have moved the true value. 0 for a text that is not a plain number."""
    text = raw.strip().rstrip("x%").strip()
    match = re.match(r"^[+-]?\d*(?:\.(\d*))?(?:[eE]([+-]?\d+))?$", text)
    if not match:
        return 0.0
    decimals = len(match.group(1) or "")
    exponent = int(match.group(2) or 0)
    return 0.5 * 10.0 ** (exponent - decimals)


@dataclasses.dataclass
class Finding:
    """A statement about an imported result: ``severity`` (``error``, ``warning``, ``info``), ``code`` (stable
    identifier), ``message`` (one line the user reads), ``line`` (1-based line of the pasted text, 0 if none)."""

    severity: str
    code: str
    message: str
    line: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class ImportedRecord:
    """One result row of a pasted output (see the module docstring for the keys).

    ``tool``: the tool that printed it (``sglang bench_serving``, ``vllm bench serve``, ``sglang
    bench_speculative``, ``sglang bench_one_batch_server``, ``sglang mtbench``, ``markdown table``, ``csv table``,
    ``one-line report``, or ``bench_serving-style output`` when the lines do not say which of the first two);
    ``label``: how the text names this row (a table's first cell) or ``""``; ``line``: 1-based line of the row
    (or of the block's first line); ``baseline``: True when the text marks the row as the run without speculative
    decoding; ``derived``: values specdash computed from raw ones (same keys as ``metrics``); ``findings``:
    inconsistencies and sanity checks.
    """

    tool: str
    line: int
    label: str = ""
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)
    raw: dict[str, str] = dataclasses.field(default_factory=dict)
    derived: dict[str, float] = dataclasses.field(default_factory=dict)
    baseline: bool = False
    findings: list[Finding] = dataclasses.field(default_factory=list)

    def value(self, key: str) -> float | None:
        """The value of ``key`` to compare and rank by: the recomputed one when there is one (a pasted derived figure
        that disagrees with its raw figures is not trusted), else the pasted one, else None."""
        if key in self.derived:
            return self.derived[key]
        return self.metrics.get(key)

    def depth_text(self) -> str:
        """``"steps 3, topk 1, draft tokens 4"`` with ``?`` for what is unknown; ``"no speculative decoding"``
        for a baseline; ``"depth unknown"`` when nothing is known."""
        if self.baseline:
            return "no speculative decoding"
        parts = [(name, self.config.get(key)) for key, name in DEPTH_LABELS]
        if all(v is None for _, v in parts):
            return "depth unknown"
        return ", ".join(f"{name} {'?' if v is None else v}" for name, v in parts)

    def title(self) -> str:
        """One line naming the record: label (if any) and depth."""
        depth = self.depth_text()
        return f"{self.label} ({depth})" if self.label and self.label not in depth else depth

    def to_run_dict(self) -> dict:
        """The JSON shape of a stored :class:`~specdash.bench.results.RunResult` (``RunResult.to_dict``), unknown
        values as ``None``, plus ``"imported"``: ``{"tool", "line", "label", "baseline", "raw", "derived",
        "findings"}``. ``accept_length_source`` is ``"imported"``."""
        m = self.metrics

        def dist(name: str) -> dict:
            return {"count": None, "mean": m.get(f"{name}_ms.mean"), "p50": m.get(f"{name}_ms.p50"),
                    "p90": m.get(f"{name}_ms.p90"), "p99": m.get(f"{name}_ms.p99"), "max": m.get(f"{name}_ms.max")}

        completed = m.get("completed")
        errors = m.get("errors")
        total = m.get("total_output_tokens")
        return {
            "settings": dict(self.settings),
            "workload": {},
            "effective_config": {k: self.config.get(k) for k in CONFIG_KEYS} | {
                k: v for k, v in self.config.items() if k not in CONFIG_KEYS},
            "started_at": None,
            "duration_s": m.get("duration_s"),
            "partial": False,
            "completed": None if completed is None else int(completed),
            "errors": None if errors is None else int(errors),
            "total_output_tokens": None if total is None else int(total),
            "output_tokens_per_s": m.get("output_tokens_per_s"),
            "requests_per_s": m.get("requests_per_s"),
            "ttft_ms": dist("ttft"),
            "itl_ms": dist("itl"),
            "tpot_ms": dist("tpot"),
            "e2e_ms": dist("e2e"),
            "output_rate_se": None,
            "accept_length": m.get("accept_length"),
            "accept_length_source": "imported" if "accept_length" in m else "none",
            "accept_length_note": f"as printed by {self.tool}" if "accept_length" in m else "not in the pasted text",
            "requests": [],
            "imported": {
                "tool": self.tool, "line": self.line, "label": self.label, "baseline": self.baseline,
                "metrics": dict(self.metrics), "raw": dict(self.raw), "derived": dict(self.derived),
                "findings": [f.to_dict() for f in self.findings],
            },
        }

    @classmethod
    def from_run_dict(cls, data: dict) -> ImportedRecord:
        """Inverse of :meth:`to_run_dict` (a stored imported record). Raises KeyError/TypeError on another shape."""
        imp = data["imported"]
        config = {k: v for k, v in dict(data.get("effective_config") or {}).items() if v is not None}
        return cls(
            tool=str(imp["tool"]), line=int(imp.get("line") or 0), label=str(imp.get("label") or ""),
            config=config, settings=dict(data.get("settings") or {}),
            metrics={str(k): float(v) for k, v in dict(imp.get("metrics") or {}).items()},
            raw={str(k): str(v) for k, v in dict(imp.get("raw") or {}).items()},
            derived={str(k): float(v) for k, v in dict(imp.get("derived") or {}).items()},
            baseline=bool(imp.get("baseline")),
            findings=[Finding(**f) for f in imp.get("findings") or []],
        )
