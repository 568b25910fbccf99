"""The config file's typed shape (``config.yaml`` in the config dir, ``specdash locate config``); every field optional.

The full commented example, every field with its default or an example value, is ``specdash/config/example.yaml``
(``specdash config --example`` prints it; a test loads it).

Field metadata used by the loader: ``choices`` (allowed values), ``min`` (smallest number), ``help``.
Top-level scalar fields can be overridden by ``SPECDASH_<FIELD>`` environment variables (``SPECDASH_THEME``,
``SPECDASH_DEFAULT_HOST``, ``SPECDASH_GPU_INTERVAL_S``, ``SPECDASH_RECORD``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

#: Benchmark APIs (same names as specdash.bench.workload.APIS).
WORKLOAD_APIS = ("chat", "completions", "generate")


@dataclasses.dataclass
class LaunchProfile:
    """A named launch command for a host: ``command`` (as pasted: env pairs, continuations allowed), extra
    ``env`` (NAME -> value) and a one-line ``description``."""

    command: str = ""
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    description: str = ""


@dataclasses.dataclass
class HostConfig:
    """A named host: ``target`` ([user@]host[:port], ssh alias or ``local``; required), ``log_path`` to follow,
    ``python`` on the host, ``server_url`` of the SGLang server, ``sglang_version`` (skip detection),
    ``identity_file``, ``port`` (SSH), ``readonly``, ``launch_profiles`` by name."""

    target: str = dataclasses.field(default="", metadata={"required": True})
    log_path: str | None = None
    python: str = "python3"
    server_url: str | None = None
    sglang_version: str | None = None
    identity_file: str | None = None
    port: int | None = dataclasses.field(default=None, metadata={"min": 1, "max": 65535})
    readonly: bool = False
    launch_profiles: dict[str, LaunchProfile] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class WorkloadConfig:
    """A benchmark workload: a shipped ``preset`` name or a prompts ``file`` (ShareGPT JSON/JSONL or text),
    plus the run settings (names as in :class:`specdash.bench.workload.Workload`)."""

    preset: str | None = None
    file: str | None = None
    api: str = dataclasses.field(default="chat", metadata={"choices": WORKLOAD_APIS})
    num_requests: int = dataclasses.field(default=16, metadata={"min": 1})
    concurrency: int | None = dataclasses.field(default=4, metadata={"min": 1})
    request_rate: float | None = dataclasses.field(default=None, metadata={"min": 0})
    output_len: int = dataclasses.field(default=256, metadata={"min": 1})
    ignore_eos: bool = True
    temperature: float = dataclasses.field(default=0.0, metadata={"min": 0})
    warmup_requests: int = dataclasses.field(default=1, metadata={"min": 0})
    seed: int = 0


@dataclasses.dataclass
class SweepPoint:
    """One configuration of a sweep: ``label``; ``baseline: true`` for the no-speculation run; otherwise
    ``flags`` to set in the launch command, by SGLang field name (e.g. ``speculative_num_draft_tokens: 16``)."""

    label: str = dataclasses.field(default="", metadata={"required": True})
    baseline: bool = False
    flags: dict[str, str | int | float | bool | None] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class SweepConfig:
    """A depth sweep: the ``workload`` to run (a name from ``workloads`` or a shipped preset), ``repeats`` per
    point, and the ``configs`` to try (empty: the default baseline + 16/10/5 draft tokens)."""

    workload: str | None = None
    repeats: int = dataclasses.field(default=3, metadata={"min": 1})
    configs: list[SweepPoint] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Config:
    """The whole config. ``source`` is the file it came from (None: defaults only); ``env_overrides`` lists the
    ``SPECDASH_*`` variables that changed a value; ``key_lines`` where each key is in the file."""

    theme: str | None = None
    default_host: str | None = None
    gpu_interval_s: float = dataclasses.field(default=2.0, metadata={"min": 0.1})
    record: bool = True
    hosts: dict[str, HostConfig] = dataclasses.field(default_factory=dict)
    workloads: dict[str, WorkloadConfig] = dataclasses.field(default_factory=dict)
    sweeps: dict[str, SweepConfig] = dataclasses.field(default_factory=dict)
    keymap: dict[str, str] = dataclasses.field(default_factory=dict)
    source: Path | None = dataclasses.field(default=None, metadata={"internal": True})
    #: line (1-based) of each dotted key in ``source`` (e.g. ``"keymap.gpus.kill"``), for messages about a value
    #: checked after loading
    key_lines: dict[str, int] = dataclasses.field(default_factory=dict, metadata={"internal": True})
    env_overrides: list[str] = dataclasses.field(default_factory=list, metadata={"internal": True})

    def target_or_default(self, target: str | None) -> str | None:
        """The TARGET a command acts on: ``target`` when given, else ``default_host`` (a host named under
        ``hosts`` or a target of its own; ``SPECDASH_DEFAULT_HOST`` overrides it), else None."""
        return target or self.default_host or None

    def host(self, name: str) -> HostConfig | None:
        """The host named ``name``, or None."""
        return self.hosts.get(name)

    def keys_for(self, binding_id: str) -> list[str] | None:
        """The user's keys for a binding id (``"K,ctrl+k"`` -> ``["K", "ctrl+k"]``), None when not remapped."""
        value = self.keymap.get(binding_id)
        if value is None:
            return None
        return [key.strip() for key in value.split(",") if key.strip()]


def to_plain(value: Any) -> Any:
    """A config object as plain dicts/lists (for display or JSON), internal fields left out."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.metadata.get("internal")}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
