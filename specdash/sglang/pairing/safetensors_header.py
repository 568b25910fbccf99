"""Reading a safetensors header without the weights.

Format (huggingface/safetensors, "format" section): 8 bytes little-endian unsigned N, then N bytes of UTF-8 JSON
``{"<tensor name>": {"dtype": "F16", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {...}}``,
then the tensor data. Only the first 8 + N bytes are ever read.
"""

from __future__ import annotations

import dataclasses
import json
import struct

#: Refuse headers larger than this (the format's own limit is 100 MB; drafts have a few KB).
MAX_HEADER_BYTES = 100 * 1024 * 1024


class SafetensorsHeaderError(ValueError):
    """The bytes are not a safetensors header (message is one line)."""


def header_length(first8: bytes) -> int:
    """The header length N from the first 8 bytes. Raises SafetensorsHeaderError when short or absurd."""
    if len(first8) < 8:
        raise SafetensorsHeaderError(f"file too short for a safetensors header ({len(first8)} bytes)")
    (length,) = struct.unpack("<Q", first8[:8])
    if length == 0 or length > MAX_HEADER_BYTES:
        raise SafetensorsHeaderError(f"implausible safetensors header length {length}")
    return length


def read_safetensors_header(data_prefix: bytes) -> dict:
    """Parse the header from the first bytes of a ``.safetensors`` file.

    ``data_prefix`` must hold at least 8 + N bytes (N from the first 8); extra bytes are ignored. Returns the header
    dict (tensor name → ``{"dtype", "shape", "data_offsets"}``, plus ``__metadata__`` when present).
    Raises SafetensorsHeaderError when truncated or not JSON.
    """
    length = header_length(data_prefix)
    if len(data_prefix) < 8 + length:
        raise SafetensorsHeaderError(f"safetensors header truncated: need {8 + length} bytes, have {len(data_prefix)}")
    try:
        header = json.loads(data_prefix[8 : 8 + length].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsHeaderError(f"safetensors header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise SafetensorsHeaderError("safetensors header is not a JSON object")
    return header


def build_safetensors_bytes(tensors: dict[str, tuple[str, list[int], bytes]], metadata: dict | None = None) -> bytes:
    """A complete, valid safetensors file: ``tensors`` maps name → (dtype e.g. ``"I64"``, shape, raw data bytes).

    Used by tests and tools to write tiny files; data sizes are not checked against shapes.
    """
    header: dict = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    blobs = []
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the format pads the header to 8-byte alignment with spaces
    return struct.pack("<Q", len(raw)) + raw + b"".join(blobs)


@dataclasses.dataclass(frozen=True)
class DraftTensors:
    """The draft tensors the checks use, from a header (or a weight index's ``weight_map`` names, shapes unknown).

    ``fc_shape``: shape of ``fc.weight`` (``[draft hidden, k × target hidden]``) or None. ``d2t_shape``: shape of
    ``d2t`` or None when absent. ``has_embed``: any ``embed_tokens.weight``. ``vllm_layer_names``: tensors named
    ``layers.0.*`` (TorchSpec ``--vllm`` export) instead of ``midlayer.*``. ``names``: every tensor name.
    """

    names: frozenset[str]
    fc_shape: tuple[int, ...] | None
    d2t_shape: tuple[int, ...] | None
    has_embed: bool
    vllm_layer_names: bool
    midlayer_names: bool
    shapes_known: bool

    @property
    def has_d2t(self) -> bool:
        return "d2t" in self.names or any(n.endswith(".d2t") for n in self.names)


def draft_tensors(header: dict | None = None, weight_index: dict | None = None) -> DraftTensors | None:
    """:class:`DraftTensors` from a safetensors ``header`` (preferred) or a ``*.safetensors.index.json`` dict."""
    shapes: dict[str, tuple[int, ...]] = {}
    names: set[str] = set()
    known = False
    if header:
        known = True
        for name, info in header.items():
            if name == "__metadata__" or not isinstance(info, dict):
                continue
            names.add(name)
            shape = info.get("shape")
            if isinstance(shape, list):
                shapes[name] = tuple(int(x) for x in shape)
    if weight_index and isinstance(weight_index.get("weight_map"), dict):
        names.update(weight_index["weight_map"].keys())
    if not names:
        return None

    def find(suffix: str) -> tuple[int, ...] | None:
        for name in sorted(names):
            if name == suffix or name.endswith("." + suffix):
                return shapes.get(name)
        return None

    return DraftTensors(
        names=frozenset(names),
        fc_shape=find("fc.weight"),
        d2t_shape=find("d2t"),
        has_embed=any(n.endswith("embed_tokens.weight") for n in names),
        vllm_layer_names=any(n.startswith("layers.0.") for n in names),
        midlayer_names=any(n.startswith("midlayer.") for n in names),
        shapes_known=known,
    )
