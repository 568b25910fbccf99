"""Helpers for the pairing tests (config pairs from tests/data/pairing, tiny safetensors files), and tests of the
safetensors header reader against files written in the real format."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from specdash.sglang.pairing import SafetensorsHeaderError, build_safetensors_bytes, read_safetensors_header

DATA = Path(__file__).parent / "data" / "pairing"


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


def test_header_round_trip_reads_only_the_header_prefix():
    blob = build_safetensors_bytes(eagle3_tensors(4096, 4096), {"format": "pt"}) + b"\x01" * 1000
    (length,) = struct.unpack("<Q", blob[:8])
    header = read_safetensors_header(blob[: 8 + length])  # exactly the header bytes, no data
    assert header["fc.weight"]["shape"] == [4096, 12288]
    assert header["d2t"]["dtype"] == "I64"
    assert header["__metadata__"] == {"format": "pt"}
    assert (8 + length) % 8 == 0  # the writer pads the header like safetensors does


def test_header_written_by_hand_in_the_documented_layout():
    raw = json.dumps({"fc.weight": {"dtype": "F16", "shape": [2, 6], "data_offsets": [0, 24]}}).encode()
    blob = struct.pack("<Q", len(raw)) + raw + b"\0" * 24
    assert read_safetensors_header(blob)["fc.weight"]["shape"] == [2, 6]


@pytest.mark.parametrize(
    "blob, words",
    [
        (b"\x05\x00", "too short"),
        (struct.pack("<Q", 0), "implausible"),
        (struct.pack("<Q", 1 << 40), "implausible"),
        (struct.pack("<Q", 50) + b"{}", "truncated"),
        (struct.pack("<Q", 4) + b"nope", "not JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
    ],
)
def test_header_errors_are_one_line(blob, words):
    with pytest.raises(SafetensorsHeaderError, match=words):
        read_safetensors_header(blob)
