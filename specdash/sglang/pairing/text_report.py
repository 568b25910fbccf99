"""Plain-text rendering of a :class:`PairingReport` (for ``specdash pair`` and ``specdash validate``)."""

from __future__ import annotations

import textwrap

from specdash.sglang.pairing.report import LayerMap, PairingReport

_LABELS = {"error": "ERROR", "warning": "WARN ", "info": "info "}


def layer_map_lines(layer_map: LayerMap) -> list[str]:
    """The layer map as aligned text lines (header line first)."""
    lo, hi = layer_map.capturable
    lines = [
        f"layer map — boundary b = hidden state after b of {layer_map.num_layers} decoder blocks "
        f"(SGLang can capture {lo}..{hi})"
    ]
    width = max(len(r.label) for r in layer_map.rows)
    for row in layer_map.rows:
        ids = f"ids {list(row.ids)} -> " if row.ids is not None else ""
        note = f"  ({row.note})" if row.note else ""
        lines.append(f"  {row.label:<{width}}  {ids}{list(row.boundaries)}{note}")
    return lines


def render_text(report: PairingReport, *, width: int = 100, title: str = "") -> str:
    """Human-readable report: title, captured layers, layer map, then each diagnostic with its fix."""
    out: list[str] = []
    if title:
        out.append(title)
    head = f"algorithm {report.algorithm}, source {report.source}"
    if report.algorithm == "EAGLE3":
        head += f": SGLang captures boundaries {report.captured_boundaries}"
        head += (
            f" (draft eagle_config ids {report.declared_ids})" if report.declared_ids is not None
            else " (draft declares no eagle_config ids)"
        )
    out.append(head)
    if report.layer_map:
        out.append("")
        out.extend(layer_map_lines(report.layer_map))
    out.append("")
    if not report.diagnostics:
        out.append("no findings")
    for diag in report.diagnostics:
        prefix = f"{_LABELS.get(diag.severity, diag.severity)} {diag.code}: "
        out.extend(textwrap.wrap(prefix + diag.message, width=width, subsequent_indent="      "))
        if diag.fix:
            out.extend(textwrap.wrap("fix: " + diag.fix.description, width=width, initial_indent="      ",
                                     subsequent_indent="           "))
    if report.suggested_ids is not None:
        out.append("")
        out.append(
            'ids to write into the draft config.json: {"eagle_config": {"eagle_aux_hidden_state_layer_ids": '
            f"{report.suggested_ids}}}}}"
        )
    errors = sum(d.severity == "error" for d in report.diagnostics)
    warnings = sum(d.severity == "warning" for d in report.diagnostics)
    out.append("")
    out.append(f"{errors} error(s), {warnings} warning(s)")
    return "\n".join(out)
