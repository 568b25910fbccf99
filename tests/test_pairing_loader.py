"""load_pair_from_host over a real LocalHost: configs, weight indexes and the draft's safetensors header."""

from __future__ import annotations

import json
import struct

import pytest
from support.pairing import eagle3_tensors, load, write_model_dir

from specdash.hosts.local import LocalHost
from specdash.sglang.pairing import PairLoadError, load_pair_from_host
from specdash.sglang.pairing.loader import read_safetensors_header_from_host


class CountingHost(LocalHost):
    """A LocalHost that records every read_file(path, max_bytes)."""

    def __init__(self):
        super().__init__()
        self.reads: list[tuple[str, int]] = []

    async def read_file(self, path, max_bytes=4 * 1024 * 1024):
        self.reads.append((path, max_bytes))
        return await super().read_file(path, max_bytes)


async def test_reads_configs_and_only_the_header_bytes(tmp_path):
    target = write_model_dir(tmp_path / "target", load("kimi_k25_target"))
    # header length with bytes >= 0x80 in its little-endian field, and 3 MB of stand-in "weights" after it
    tensors = eagle3_tensors(7168, 7168, vllm_names=True)
    tensors["pad"] = ("U8", [1], b"\0")
    draft = write_model_dir(tmp_path / "draft", load("kimi_k25_draft_vllm_export"), tensors, padding_bytes=3 << 20)
    blob = (draft / "model.safetensors").read_bytes()
    (length,) = struct.unpack("<Q", blob[:8])
    host = CountingHost()
    inputs = await load_pair_from_host(host, str(target), str(draft))
    assert inputs.target_config["text_config"]["num_hidden_layers"] == 61
    assert inputs.draft_safetensors_header["fc.weight"]["shape"] == [7168, 3 * 7168]
    safetensor_reads = [m for p, m in host.reads if p.endswith(".safetensors")]
    assert safetensor_reads == [8, 8 + length]
    report = inputs.analyze("EAGLE3", sglang_version="0.5.12")
    assert report.by_code("id-convention")[0].severity == "error"  # layers.0.* names seen in the header


async def test_header_length_with_high_bytes_survives_a_text_decoding_host(tmp_path):
    """LocalHost.run decodes stdout as UTF-8 with replacement; a length byte >= 0x80 must still be read right."""
    meta = {"format": "pt", "note": "x" * 300}
    from specdash.sglang.pairing import build_safetensors_bytes

    blob = build_safetensors_bytes(eagle3_tensors(4096, 4096), meta)
    assert any(b >= 0x80 for b in blob[:8])
    path = tmp_path / "model.safetensors"
    path.write_bytes(blob)
    header = await read_safetensors_header_from_host(LocalHost(), str(path))
    assert header["__metadata__"]["note"] == "x" * 300
    assert header["d2t"]["shape"] == [32000]


async def test_config_json_paths_and_sharded_drafts(tmp_path):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"), eagle3_tensors(4096, 4096),
                            filename="model-00001-of-00001.safetensors")
    (draft / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"fc.weight": "model-00001-of-00001.safetensors"}})
    )
    inputs = await load_pair_from_host(LocalHost(), str(target / "config.json"), str(draft / "config.json"))
    assert inputs.draft_weight_index["weight_map"]["fc.weight"].startswith("model-00001")
    assert inputs.draft_safetensors_header["fc.weight"]["shape"] == [4096, 12288]
    assert not inputs.analyze().has_errors


async def test_unindexed_shard_found_by_listing(tmp_path):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"), eagle3_tensors(4096, 4096, k=2),
                            filename="pytorch_model.safetensors")
    inputs = await load_pair_from_host(LocalHost(), str(target), str(draft))
    assert "fc-width" in {d.code for d in inputs.analyze().diagnostics if d.severity == "error"}


async def test_draft_without_weights_is_noted(tmp_path):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"))
    inputs = await load_pair_from_host(LocalHost(), str(target), str(draft))
    assert inputs.draft_safetensors_header is None
    assert any("no draft safetensors" in n for n in inputs.notes)


async def test_missing_and_broken_configs_raise_one_line_errors(tmp_path):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    with pytest.raises(PairLoadError, match="cannot read the draft config"):
        await load_pair_from_host(LocalHost(), str(target), str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with pytest.raises(PairLoadError, match="not valid JSON"):
        await load_pair_from_host(LocalHost(), str(target), str(bad))


async def test_not_a_safetensors_file_is_noted(tmp_path):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"))
    (draft / "model.safetensors").write_bytes(b"\0" * 8 + b"garbage")
    inputs = await load_pair_from_host(LocalHost(), str(target), str(draft))
    assert inputs.draft_safetensors_header is None
    assert any("implausible" in n for n in inputs.notes)


async def test_service_caches_files_and_probe(tmp_path, monkeypatch):
    import os
    import sys

    from support.pairing import DATA

    from specdash.sglang.pairing import PairingService

    class Host(CountingHost):
        def __init__(self):
            super().__init__()
            self._env = dict(os.environ, PYTHONPATH=str(DATA / "fake_sglang"))
            self.commands = 0

        async def run(self, command, timeout_s=30.0, input=None):
            self.commands += 1
            return await super().run(command, timeout_s, input)

    target = write_model_dir(tmp_path / "t", load("deepseek_v3_target"))
    draft = write_model_dir(tmp_path / "d", load("deepseek_v3_draft_vllm_ids"), eagle3_tensors(7168, 7168))
    host = Host()
    service = PairingService(host, python=sys.executable)
    first = await service.report(str(target), str(draft))
    reads, commands = len(host.reads), host.commands
    again = await service.report(str(target), str(draft))
    assert (len(host.reads), host.commands) == (reads, commands)  # nothing read or run twice
    assert first.source == again.source == "probe" and first.captured_boundaries == [2, 30, 58]
    old = await service.report(str(target), str(draft), sglang_version="0.5.12")
    assert old.source == "rules:0.5.12" and old.captured_boundaries == [3, 31, 59]
    assert "SGLang feeds [3, 31, 59]" in old.headline() and old.headline().startswith("pairing: warning id-convention")
    service.invalidate()
    await service.report(str(target), str(draft))
    assert len(host.reads) > reads
