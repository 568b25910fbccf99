"""Layer-id conventions of the training frameworks, and guessing which one a draft's ids use.

A draft config records ids but never their convention (nothing in the file says whether an id names a layer's output or
its input):

* "output of block k" (trainer convention; SpecForge, TorchSpec, ModelOpt) — id k ⇒ boundary k + 1;
* "input of block k" / boundary (SGLang internals, vLLM configs, SafeAILab/EAGLE) — id k ⇒ boundary k.
"""

from __future__ import annotations

import dataclasses

from specdash.sglang.pairing.architectures import FOREIGN_EAGLE3_ARCHS


@dataclasses.dataclass(frozen=True)
class TrainerDefault:
    """A framework's default capture: ``label``, the ``ids`` it writes/passes for N layers, their ``convention``
    (``output`` or ``boundary``) and the resulting boundaries; ``source`` names where the default is defined."""

    label: str
    ids: tuple[int, ...]
    convention: str
    source: str

    @property
    def boundaries(self) -> tuple[int, ...]:
        return tuple(i + 1 for i in self.ids) if self.convention == "output" else self.ids


def trainer_defaults(num_layers: int) -> list[TrainerDefault]:
    """The common trainers' default captures for a target with ``num_layers`` decoder layers."""
    n = num_layers
    return [
        TrainerDefault(
            "SpecForge/TorchSpec/ModelOpt default", (1, max(0, n // 2 - 1), max(0, n - 4)), "output",
            "SpecForge specforge/core/eagle3.py, TorchSpec torchspec/utils/misc.py, NVIDIA ModelOpt",
        ),
        TrainerDefault("SafeAILab EAGLE / vLLM default", (2, n // 2, n - 3), "boundary",
                       "SafeAILab/EAGLE modeling_llama_kv.py, vLLM PR #16937"),
        TrainerDefault("SpecForge online 2025-09-01..10-20", (1, n // 2, n - 4), "output",
                       "SpecForge PR #198, fixed by PR #240"),
    ]


@dataclasses.dataclass(frozen=True)
class ConventionGuess:
    """Which convention the declared ids most likely use.

    ``convention``: ``output``, ``boundary`` or ``unknown``. ``strength``: ``strong`` (the files prove it),
    ``likely`` or ``unknown``. ``reason``: plain words. ``boundaries``: the trained boundaries under the guess
    (None when unknown).
    """

    convention: str
    strength: str
    reason: str
    boundaries: tuple[int, ...] | None


def guess_convention(
    ids: list[int],
    num_layers: int,
    *,
    vllm_tensor_names: bool = False,
    duplicated_at_top_level: bool = False,
    draft_architecture: str | None = None,
) -> ConventionGuess:
    """Guess the convention of ``ids`` for a target with ``num_layers`` layers (rules in order, first wins):

    1. an id equal to N can only be a boundary (as an output id it would be past the last block) — strong;
    2. first id 1, or an id 0 (boundary 0 is the embedding) — output, likely (trainer defaults start at 1; a
       user who rewrote a vLLM export's ids to trainer style keeps the export's tensor names);
    3. ``layers.0.*`` tensors (TorchSpec ``--vllm`` export renames ``midlayer.``) or a vLLM/speculators
       architecture — boundary, strong;
    4. ids also written at the top level (vLLM reads them there; TorchSpec writes both) — boundary, likely;
    5. exactly [2, N//2, N−3] (EAGLE/vLLM default in boundary terms) — boundary, likely;
    6. otherwise unknown.
    """
    n = num_layers

    def boundary(strength: str, reason: str) -> ConventionGuess:
        return ConventionGuess("boundary", strength, reason, tuple(ids))

    def output(strength: str, reason: str) -> ConventionGuess:
        return ConventionGuess("output", strength, reason, tuple(i + 1 for i in ids))

    if ids and max(ids) == n:
        return boundary("strong", f"id {n} equals the layer count, so the ids are boundaries")
    if ids and (ids[0] == 1 or min(ids) == 0):
        return output("likely", "the ids start like a trainer's output-of-block ids (SpecForge/TorchSpec/ModelOpt)")
    if vllm_tensor_names:
        return boundary("strong", "the weights use vLLM export names (layers.0.*), whose ids are boundaries")
    if draft_architecture in FOREIGN_EAGLE3_ARCHS and draft_architecture != "LlamaForCausalLM":
        return boundary("strong",
                        f"{draft_architecture} is {FOREIGN_EAGLE3_ARCHS[draft_architecture]}, which uses boundary ids")
    if duplicated_at_top_level:
        return boundary("likely", "the ids are also written at the top level, as vLLM exports do")
    if list(ids) == [2, n // 2, n - 3]:
        return boundary("likely", "the ids equal the EAGLE/vLLM default [2, N//2, N-3] in boundary terms")
    return ConventionGuess("unknown", "unknown", "the config does not record the convention", None)


def describe_boundaries(boundaries: list[int] | tuple[int, ...]) -> str:
    """``[2, 30, 58] (outputs of blocks 1, 29, 57)`` — boundary b is the output of 0-based block b − 1."""
    blocks = ", ".join("embedding" if b == 0 else str(b - 1) for b in boundaries)
    return f"{list(boundaries)} (outputs of blocks {blocks})"
