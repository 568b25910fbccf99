"""Tests of the safetensors header reader against files written in the real format (helpers in
support/pairing.py)."""

from __future__ import annotations

import json
import struct

import pytest
from support.pairing import eagle3_tensors

from specdash.sglang.pairing import SafetensorsHeaderError, build_safetensors_bytes, read_safetensors_header


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
