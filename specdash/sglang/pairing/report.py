"""Result types of the pairing analysis: diagnostics, the layer map and the report.

All boundaries use one coordinate system (``docs/pairing.md``): boundary ``b`` is the residual-stream hidden
state after ``b`` decoder blocks have run (0 = embedding output, N = after the last block, before the final norm).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Literal

from specdash.severity import severity_rank
from specdash.sglang.diagnostics import Diagnostic, Fix

Severity = Literal["error", "warning", "info"]



def pairing_diagnostic(severity: Severity, code: str, message: str, fix: str = "") -> Diagnostic:
    """One pairing finding, as the validator's :class:`~specdash.sglang.diagnostics.Diagnostic` (one class for
    every diagnostic specdash shows).

    ``severity``: ``error`` (static evidence makes a failure or garbage certain), ``warning`` (likely wrong, the
    files cannot prove it) or ``info``. ``code``: stable kebab-case id (e.g. ``id-convention``). ``message``: plain
    explanation, one or a few sentences. ``fix``: the concrete change, in words (it is about the model files, not
    the launch command, so the :class:`~specdash.sglang.diagnostics.Fix` carries no command edits); empty for none.
    """
    return Diagnostic(severity, code, (), message, Fix(fix, (), "") if fix else None)


def pairing_json(diag: Diagnostic) -> dict:
    """A pairing diagnostic as ``specdash pair --json`` prints it: ``{"severity", "code", "message", "fix"}``
    (``fix``: the advice, "" for none)."""
    return {"severity": diag.severity, "code": diag.code, "message": diag.message,
            "fix": diag.fix.description if diag.fix else ""}


@dataclasses.dataclass(frozen=True)
class LayerMapRow:
    """One line of the layer map.

    ``label``: who (e.g. ``SGLang captures``, ``SpecForge/TorchSpec/ModelOpt default``). ``ids``: the ids as written
    in a config (None when the row has none). ``boundaries``: the same layers as boundary indices. ``kind``:
    ``captured``, ``declared`` or ``trainer``. ``note``: short remark (e.g. the convention assumed).
    """

    label: str
    boundaries: tuple[int, ...]
    ids: tuple[int, ...] | None = None
    kind: str = "trainer"
    note: str = ""


@dataclasses.dataclass(frozen=True)
class LayerMap:
    """Boundary coordinates of everything that names target layers.

    ``num_layers``: the target's decoder-layer count N. ``capturable``: inclusive (low, high) range of boundaries
    the SGLang build can capture (high is N−1, or N where the final boundary is capturable). ``rows``: captured
    first, then what the draft declares under each reading, then trainer defaults.
    """

    num_layers: int
    capturable: tuple[int, int]
    rows: tuple[LayerMapRow, ...]

    def to_json(self) -> dict:
        """Plain-JSON form:
        ``{"num_layers", "capturable", "rows": [{"label", "kind", "ids", "boundaries", "note"}]}``."""
        return {
            "num_layers": self.num_layers,
            "capturable": list(self.capturable),
            "rows": [
                {
                    "label": r.label,
                    "kind": r.kind,
                    "ids": list(r.ids) if r.ids is not None else None,
                    "boundaries": list(r.boundaries),
                    "note": r.note,
                }
                for r in self.rows
            ],
        }


@dataclasses.dataclass
class PairingReport:
    """What the pairing analysis found.

    ``diagnostics``: ordered errors, warnings, infos. ``captured_boundaries``: the boundaries SGLang will feed the
    draft, in capture (layer) order, empty when nothing is captured (non-EAGLE-3 algorithms). ``declared_ids``: the
    ids SGLang reads (``eagle_config.eagle_aux_hidden_state_layer_ids``), None when absent. ``source``: ``probe``
    (the installed SGLang's own ``set_eagle3_layers_to_capture``) or ``rules:<version>``. ``layer_map``: a
    :class:`LayerMap` or None when the target layer count is unknown. ``suggested_ids``: ids to write into the
    draft's ``eagle_config`` so that SGLang captures the trained boundaries (None when nothing to change).
    """

    diagnostics: list[Diagnostic]
    captured_boundaries: list[int]
    declared_ids: list[int] | None
    source: str
    layer_map: LayerMap | None = None
    algorithm: str = "EAGLE3"
    sglang_version: str | None = None
    suggested_ids: list[int] | None = None

    @property
    def has_errors(self) -> bool:
        """True when any diagnostic is an ``error``."""
        return any(d.severity == "error" for d in self.diagnostics)

    def by_code(self, code: str) -> list[Diagnostic]:
        """The diagnostics with ``code``."""
        return [d for d in self.diagnostics if d.code == code]

    def headline(self) -> str:
        """One line for other panes (e.g. a low-accept finding): the worst finding, or what SGLang captures.

        ``pairing: error id-convention — SGLang feeds [3, 31, 59]; write ids [1, 29, 57]`` /
        ``pairing: no error (SGLang feeds [2, 16, 29])``.
        """
        worst = self.diagnostics[0] if self.diagnostics and self.diagnostics[0].severity != "info" else None
        feeds = f"SGLang feeds {self.captured_boundaries}" if self.algorithm == "EAGLE3" else self.algorithm
        if worst is None:
            return f"pairing: no error or warning ({feeds})"
        more = f"; write ids {self.suggested_ids}" if self.suggested_ids is not None else ""
        return f"pairing: {worst.severity} {worst.code} — {feeds}{more}"

    def to_json(self) -> dict:
        """The issue's JSON shape plus extras: ``{"diagnostics": [...], "captured_boundaries": [...],
        "declared_ids": [...] | None, "source": "probe" | "rules:<version>", "layer_map": {...} | None,
        "suggested_ids": [...] | None}``."""
        return {
            "diagnostics": [pairing_json(d) for d in self.diagnostics],
            "captured_boundaries": list(self.captured_boundaries),
            "declared_ids": list(self.declared_ids) if self.declared_ids is not None else None,
            "source": self.source,
            "layer_map": self.layer_map.to_json() if self.layer_map else None,
            "suggested_ids": list(self.suggested_ids) if self.suggested_ids is not None else None,
        }

    def to_json_text(self) -> str:
        """:meth:`to_json` as indented JSON text."""
        return json.dumps(self.to_json(), indent=2)


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Errors first, then warnings, then infos; stable within a severity."""
    return sorted(diags, key=lambda d: severity_rank(d.severity))
