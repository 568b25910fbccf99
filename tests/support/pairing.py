"""Pairing inputs for the tests: config pairs from tests/data/pairing, tiny safetensors files, and the worked
examples of docs/pairing.md."""

from __future__ import annotations

import json
from pathlib import Path

from specdash.sglang.pairing import build_safetensors_bytes, read_safetensors_header

DATA = Path(__file__).parent.parent / "data" / "pairing"


def load(name: str) -> dict:
    """A config dict from tests/data/pairing/<name>.json."""
    return json.loads((DATA / f"{name}.json").read_text())


def eagle3_tensors(
    draft_hidden: int,
    target_hidden: int,
    k: int = 3,
    *,
    draft_vocab: int | None = 32000,
    d2t_len: int | None = None,
    vllm_names: bool = False,
    embed_vocab: int | None = None,
) -> dict:
    """Tensor specs of an EAGLE-3 head: name -> (dtype, shape, data). Data is a few zero bytes, never weights."""
    layer = "layers.0." if vllm_names else "midlayer."
    tensors: dict = {
        "fc.weight": ("BF16", [draft_hidden, k * target_hidden], b"\0\0"),
        layer + "self_attn.q_proj.weight": ("BF16", [draft_hidden, 2 * draft_hidden], b"\0\0"),
        "norm.weight": ("BF16", [draft_hidden], b"\0\0"),
    }
    if draft_vocab is not None:
        tensors["lm_head.weight"] = ("BF16", [draft_vocab, draft_hidden], b"\0\0")
        length = draft_vocab if d2t_len is None else d2t_len
        if length:
            tensors["d2t"] = ("I64", [length], b"\0" * 8)
    if embed_vocab is not None:
        tensors["embed_tokens.weight"] = ("BF16", [embed_vocab, draft_hidden], b"\0\0")
    return tensors


def write_model_dir(root: Path, config: dict, tensors: dict | None = None, *, filename: str = "model.safetensors",
                    padding_bytes: int = 0) -> Path:
    """A model directory with config.json and, when ``tensors`` is given, a real safetensors file (header + a
    few data bytes + ``padding_bytes`` of zeros standing in for the weights that must never be read)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config))
    if tensors is not None:
        (root / filename).write_bytes(build_safetensors_bytes(tensors, {"format": "pt"}) + b"\0" * padding_bytes)
    return root


def header_of(tensors: dict) -> dict:
    """The parsed header of a safetensors file built from ``tensors`` (round trip through the real format)."""
    return read_safetensors_header(build_safetensors_bytes(tensors))


# -- tests of the header reader ---------------------------------------------------------------------------------


ALL = ("0.5.12", "0.5.16", "0.5.23")

# (target, draft, {version: boundaries})
WORKED = [
    ("llama31_8b", "llama31_8b_draft_noids", dict.fromkeys(ALL, [2, 16, 29])),
    ("llama31_8b", "llama31_8b_draft_trainer_ids", dict.fromkeys(ALL, [2, 16, 29])),
    ("llama31_8b", "llama31_8b_draft_vllm_ids", dict.fromkeys(ALL, [3, 17, 30])),
    ("qwen3_235b", "qwen3_235b_draft_noids", dict.fromkeys(ALL, [2, 47, 91])),
    ("qwen3_235b", "qwen3_235b_draft_specforge", dict.fromkeys(ALL, [2, 47, 91])),
    ("qwen3_235b", "qwen3_235b_draft_vllm_ids", dict.fromkeys(ALL, [3, 48, 92])),
    ("deepseek_v3", "deepseek_v3_draft_noids", dict.fromkeys(ALL, [2, 30, 58])),
    ("deepseek_v3", "deepseek_v3_draft_specforge", dict.fromkeys(ALL, [2, 30, 58])),
    ("deepseek_v3", "deepseek_v3_draft_vllm_ids", {"0.5.12": [3, 31, 59], "0.5.16": [2, 30, 58], "0.5.23": [2, 30, 58]}),
    ("kimi_k25", "kimi_k25_draft_noids", dict.fromkeys(ALL, [2, 30, 58])),
    ("kimi_k25", "kimi_k25_draft_torchspec", dict.fromkeys(ALL, [2, 30, 58])),
    ("kimi_k25", "kimi_k25_draft_vllm_export", {"0.5.12": [3, 31, 59], "0.5.16": [2, 30, 58], "0.5.23": [2, 30, 58]}),
    ("gpt_oss_120b", "gpt_oss_draft_noids", dict.fromkeys(ALL, [2, 18, 33])),
    # SpecForge ships [1,17,33]: +1 everywhere (max id 33 != N)
    ("gpt_oss_120b", "gpt_oss_draft_specforge", dict.fromkeys(ALL, [2, 18, 34])),
    # nvidia/gpt-oss-120b-Eagle3-v3 [24,30,36]: 36 == N, kept as boundaries from 0.5.17 on
    ("gpt_oss_120b", "gpt_oss_draft_nvidia_v3", {"0.5.12": [25, 31, 37], "0.5.16": [25, 31, 37], "0.5.23": [24, 30, 36]}),
    # ModelOpt long-context [1,17,32]: the 0.5.23 code keeps the +1 (max id != N) -> [2,18,33]
    ("gpt_oss_120b", "gpt_oss_draft_modelopt_long_context", dict.fromkeys(ALL, [2, 18, 33])),
]
