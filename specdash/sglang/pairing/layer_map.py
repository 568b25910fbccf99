"""Building the layer map: every party that names target layers, in boundary coordinates."""

from __future__ import annotations

from specdash.sglang.pairing.conventions import ConventionGuess, trainer_defaults
from specdash.sglang.pairing.report import LayerMap, LayerMapRow


def build_layer_map(
    num_layers: int,
    capturable: tuple[int, int],
    captured: list[int],
    captured_note: str,
    declared_ids: list[int] | None,
    *,
    declared_label: str = "draft eagle_config ids",
    guess: ConventionGuess | None = None,
) -> LayerMap:
    """Rows: what SGLang captures; the declared ids read as outputs of blocks (x+1) and as boundaries (x), the
    guessed reading marked; then each common trainer's default (see :mod:`.conventions`)."""
    rows = [LayerMapRow("SGLang captures", tuple(captured), None, "captured", captured_note)]
    if declared_ids is not None:
        as_output = tuple(i + 1 for i in declared_ids)
        as_boundary = tuple(declared_ids)
        pick = guess.convention if guess else "unknown"
        rows.append(
            LayerMapRow(
                f"{declared_label} as block outputs", as_output, tuple(declared_ids), "declared",
                "likely trained" if pick == "output" else "",
            )
        )
        rows.append(
            LayerMapRow(
                f"{declared_label} as boundaries", as_boundary, tuple(declared_ids), "declared",
                "likely trained" if pick == "boundary" else "",
            )
        )
    for default in trainer_defaults(num_layers):
        rows.append(LayerMapRow(default.label, default.boundaries, default.ids, "trainer", default.convention + " ids"))
    return LayerMap(num_layers=num_layers, capturable=capturable, rows=tuple(rows))
