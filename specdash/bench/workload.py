"""Workloads: which prompts to send and with which default settings.

Two sources: presets shipped in :mod:`specdash.bench.workloads` (JSON data files, no download) and a user file:

* ShareGPT-style JSON (a list of ``{"conversations": [{"from": "human", "value": ...}, ...]}``; the first
  human/user turn is the prompt, as SGLang's ``bench_serving --dataset-name sharegpt`` does) or JSONL (one such
  object per line). Entries may also be plain strings, ``{"prompt": ...}``, ``{"text": ...}`` or
  ``{"messages": [{"role": "user", "content": ...}]}``.
* anything else: plain text, one prompt per non-empty line.
"""

from __future__ import annotations

import dataclasses
import json
import random
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable

#: APIs a workload can target: OpenAI chat (/v1/chat/completions), OpenAI completions (/v1/completions) and
#: SGLang's native /generate.
APIS = ("chat", "completions", "generate")


class WorkloadError(ValueError):
    """A workload name or file cannot be used (one-line message for the user)."""


@dataclasses.dataclass(frozen=True)
class Workload:
    """Prompts plus default benchmark settings.

    ``name``: preset name or file name; ``prompts``: user messages (non-empty); ``api``: one of :data:`APIS`;
    ``num_requests``; ``concurrency`` (None = unlimited); ``request_rate`` (requests/s, None = all at once);
    ``output_len`` (max tokens per request); ``ignore_eos`` (ask the server to generate exactly ``output_len``
    tokens - SGLang sampling parameter, accepted on all three APIs); ``temperature``; ``warmup_requests``;
    ``source``: "preset" or the file path.
    """

    name: str
    prompts: tuple[str, ...]
    description: str = ""
    api: str = "chat"
    num_requests: int = 16
    concurrency: int | None = 4
    request_rate: float | None = None
    output_len: int = 256
    ignore_eos: bool = True
    temperature: float = 0.0
    warmup_requests: int = 1
    source: str = "preset"

    def prompt_order(self, num_requests: int, seed: int) -> list[str]:
        """The prompt of each request: the prompts shuffled with ``seed`` and cycled to ``num_requests``."""
        order = list(range(len(self.prompts)))
        random.Random(seed).shuffle(order)
        return [self.prompts[order[i % len(order)]] for i in range(num_requests)]

    def to_dict(self) -> dict:
        """JSON-ready dict (prompts included, so a stored result says exactly what was sent)."""
        data = dataclasses.asdict(self)
        data["prompts"] = list(self.prompts)
        return data


def _preset_files() -> dict[str, Traversable]:
    root = resources.files("specdash.bench.workloads")
    found = {}
    for entry in root.iterdir():
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            found[data["name"]] = entry
    return found


def preset_names() -> list[str]:
    """Names of the shipped presets, sorted (e.g. ``batch1-latency``, ``long-generation``, ``short-chat``)."""
    return sorted(_preset_files())


def _from_mapping(data: dict, source: str) -> Workload:
    fields = {f.name for f in dataclasses.fields(Workload)}
    kwargs = {k: v for k, v in data.items() if k in fields}
    kwargs["prompts"] = tuple(data["prompts"])
    kwargs["source"] = source
    workload = Workload(**kwargs)
    if workload.api not in APIS:
        raise WorkloadError(f"workload {workload.name}: api must be one of {', '.join(APIS)}")
    return workload


def load_preset(name: str) -> Workload:
    """Load a shipped preset by name. Raises :class:`WorkloadError` listing the names when unknown."""
    files = _preset_files()
    if name not in files:
        raise WorkloadError(f"unknown workload {name!r}; presets: {', '.join(sorted(files))}")
    return _from_mapping(json.loads(files[name].read_text(encoding="utf-8")), "preset")


def _prompt_of(entry: object) -> str | None:
    if isinstance(entry, str):
        return entry
    if not isinstance(entry, dict):
        return None
    for key in ("prompt", "text", "question", "instruction"):
        if isinstance(entry.get(key), str):
            return entry[key]
    turns = entry.get("conversations") or entry.get("conversation") or entry.get("messages")
    if isinstance(turns, list):
        for turn in turns:
            if not isinstance(turn, dict):
                continue
            who = turn.get("from", turn.get("role"))
            text = turn.get("value", turn.get("content"))
            if who in ("human", "user") and isinstance(text, str):
                return text
    return None


def parse_prompts(text: str, name: str = "<text>") -> list[str]:
    """Extract prompts from file contents (format detected as described in the module docstring).

    Raises :class:`WorkloadError` when no prompt can be found.
    """
    stripped = text.strip()
    entries: list[object] | None = None
    if stripped.startswith("[") or stripped.startswith("{"):
        try:
            loaded = json.loads(stripped)
            entries = loaded if isinstance(loaded, list) else [loaded]
        except json.JSONDecodeError:
            try:
                entries = [json.loads(line) for line in stripped.splitlines() if line.strip()]
            except json.JSONDecodeError as exc:
                raise WorkloadError(f"{name}: not valid JSON or JSONL (line {exc.lineno}: {exc.msg})") from None
    if entries is None:
        prompts = [line.strip() for line in text.splitlines() if line.strip()]
    else:
        prompts = [p for p in (_prompt_of(e) for e in entries) if p and p.strip()]
    if not prompts:
        raise WorkloadError(f"{name}: no prompts found (expected ShareGPT JSON/JSONL or one prompt per line)")
    return prompts


def load_file(path: str | Path, **settings) -> Workload:
    """Load a user workload file; ``settings`` override :class:`Workload` defaults (e.g. ``output_len=512``).

    Raises :class:`WorkloadError` when the file is missing/unreadable or holds no prompts.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorkloadError(f"cannot read workload file {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WorkloadError(f"workload file {file} is not UTF-8 text") from None
    prompts = parse_prompts(text, str(file))
    return Workload(name=file.name, prompts=tuple(prompts), source=str(file), **settings)


def resolve_workload(name_or_path: str) -> Workload:
    """A preset by name, else a file by path. Raises :class:`WorkloadError` when neither exists."""
    if name_or_path in _preset_files():
        return load_preset(name_or_path)
    if Path(name_or_path).exists():
        return load_file(name_or_path)
    raise WorkloadError(
        f"no preset or file named {name_or_path!r}; presets: {', '.join(preset_names())}"
    )
