"""Reading a target/draft pair from a host: config.json files, the draft's safetensors header, weight indexes.

JSON files are read through :mod:`specdash.sglang.host_facts` (the one reader of host files and versions, cached
per connection).

Only headers are read, never weights: a safetensors header costs two reads (the 8-byte length, then 8 + length
bytes). Everything goes through the :class:`~specdash.hosts.base.Host` interface.
"""

from __future__ import annotations

import dataclasses
import posixpath

from specdash.sglang.host_facts import facts_for, split_model_path
from specdash.sglang.pairing.safetensors_header import (
    SafetensorsHeaderError,
    header_length,
)

__all__ = ["INDEX_NAME", "PairInputs", "PairLoadError", "load_pair_from_host", "read_json",
           "read_safetensors_header_from_host", "split_model_path"]

INDEX_NAME = "model.safetensors.index.json"


class PairLoadError(Exception):
    """A config could not be read or parsed (message is one line, names the path)."""


@dataclasses.dataclass
class PairInputs:
    """What :func:`load_pair_from_host` read.

    ``target_config``/``draft_config``: parsed ``config.json`` dicts. ``draft_safetensors_header``: the header of
    the draft shard holding ``fc.weight`` (or of ``model.safetensors``), None when none was found.
    ``draft_weight_index``/``target_weight_index``: parsed ``model.safetensors.index.json`` or None.
    ``target_dir``/``draft_dir``: model directories. ``notes``: one-line remarks (what could not be read).
    """

    target_config: dict
    draft_config: dict
    target_dir: str
    draft_dir: str
    draft_safetensors_header: dict | None = None
    draft_weight_index: dict | None = None
    target_weight_index: dict | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    def analyze(self, algorithm: str = "EAGLE3", *, sglang_version: str | None = None,
                probe_result: dict | None = None, tokenizer_fingerprints: tuple[str, str] | None = None):
        """:func:`analyze_pairing` on these inputs (the target's weight index is used for NEXTN)."""
        from specdash.sglang.pairing.analyze import analyze_pairing

        nextn = algorithm.strip().upper() == "NEXTN"
        return analyze_pairing(
            self.target_config, self.draft_config, algorithm=algorithm, sglang_version=sglang_version,
            draft_safetensors_header=self.draft_safetensors_header,
            weight_index=self.target_weight_index if nextn else self.draft_weight_index,
            tokenizer_fingerprints=tokenizer_fingerprints, probe_result=probe_result,
        )


async def read_json(host, path: str, what: str, *, required: bool = True) -> dict | None:
    """Read and parse a JSON object file on ``host`` (through its :func:`~specdash.sglang.host_facts.facts_for`,
    so a file already read on this connection is not read again). Missing: PairLoadError when ``required`` else
    None; unparsable: PairLoadError."""
    read = await facts_for(host).read_json(path, what)
    if read.value is not None:
        return read.value
    if read.missing and not required:
        return None
    raise PairLoadError(read.problem or f"cannot read the {what} {path}")


async def read_safetensors_header_from_host(host, path: str) -> dict | None:
    """The header of the safetensors file ``path`` on ``host`` (None when the file is missing).

    Two reads: ``host.read_file(path, max_bytes=8)`` for the length N, then ``max_bytes=8 + N``. Hosts that pass
    file bytes through a text decode may mangle the binary length field; the length is then re-read as decimal
    bytes with ``od``, and the (UTF-8 JSON) header is taken from the tail of the second read.
    Raises SafetensorsHeaderError for a file that is not safetensors.
    """
    from specdash.hosts.base import quote
    from specdash.sglang.pairing.safetensors_header import read_safetensors_header

    first = await host.read_file(path, max_bytes=8)
    if first is None:
        return None
    if len(first) == 8:
        length = header_length(first)
    else:
        result = await host.run(f"od -An -v -tu1 -N 8 -- {quote(path)}", timeout_s=15)
        values = [int(v) for v in result.stdout.split() if v.isdigit()] if result.ok else []
        if len(values) != 8:
            raise SafetensorsHeaderError(f"cannot read the safetensors length field of {path}")
        length = header_length(bytes(values))
    data = await host.read_file(path, max_bytes=8 + length)
    if data is None or len(data) < length:
        raise SafetensorsHeaderError(f"safetensors header of {path} is truncated")
    return read_safetensors_header(length.to_bytes(8, "little") + data[len(data) - length :])


async def _draft_weights(host, draft_dir: str, inputs: PairInputs) -> None:
    index = None
    try:
        index = await read_json(host, posixpath.join(draft_dir, INDEX_NAME), "draft weight index", required=False)
    except PairLoadError as exc:
        inputs.notes.append(str(exc))
    inputs.draft_weight_index = index
    shard = None
    if index and isinstance(index.get("weight_map"), dict):
        weight_map = index["weight_map"]
        shard = weight_map.get("fc.weight") or next(iter(weight_map.values()), None)
    candidates = [shard] if isinstance(shard, str) else []
    candidates.append("model.safetensors")
    for name in candidates:
        path = posixpath.join(draft_dir, name)
        try:
            header = await read_safetensors_header_from_host(host, path)
        except SafetensorsHeaderError as exc:
            inputs.notes.append(str(exc))
            return
        if header is not None:
            inputs.draft_safetensors_header = header
            return
    listing = await host.run(f"ls -1 -- {_quote(draft_dir)}", timeout_s=15)
    names = sorted(n for n in listing.stdout.splitlines() if n.endswith(".safetensors")) if listing.ok else []
    for name in names:
        try:
            header = await read_safetensors_header_from_host(host, posixpath.join(draft_dir, name))
        except SafetensorsHeaderError as exc:
            inputs.notes.append(str(exc))
            continue
        if header is not None:
            inputs.draft_safetensors_header = header
            return
    inputs.notes.append(f"no draft safetensors file in {draft_dir}: fc/d2t checks skipped")


def _quote(text: str) -> str:
    from specdash.hosts.base import quote

    return quote(text)


async def load_pair_from_host(host, target_path: str, draft_path: str) -> PairInputs:
    """Read both configs (and the draft's safetensors header, the weight indexes) through ``host``.

    ``target_path``/``draft_path``: model directories (holding ``config.json``) or ``config.json`` paths.
    Raises PairLoadError (one line) when a config cannot be read or parsed; HostError when the host is unreachable.
    """
    target_dir, target_cfg_path = split_model_path(target_path)
    draft_dir, draft_cfg_path = split_model_path(draft_path)
    target_config = await read_json(host, target_cfg_path, "target config")
    draft_config = await read_json(host, draft_cfg_path, "draft config")
    assert target_config is not None and draft_config is not None
    inputs = PairInputs(target_config=target_config, draft_config=draft_config,
                        target_dir=target_dir, draft_dir=draft_dir)
    try:
        inputs.target_weight_index = await read_json(
            host, posixpath.join(target_dir, INDEX_NAME), "target weight index", required=False
        )
    except PairLoadError as exc:
        inputs.notes.append(str(exc))
    await _draft_weights(host, draft_dir, inputs)
    return inputs
