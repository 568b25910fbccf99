"""What specdash reads about a host's SGLang install and models, read once per connection.

* :meth:`HostFacts.sglang_version` - the ``sglang.__version__`` an interpreter on the host imports
  (``<python> -c 'import sglang; print(sglang.__version__)'``);
* :meth:`HostFacts.read_json` / :meth:`HostFacts.model_config` - a JSON object file, e.g. a model's
  ``config.json`` (architecture-dependent rules, the draft/target pairing check).

The builder pane, ``specdash validate`` and the pairing loader all read through :func:`facts_for`, so one host
is asked once: answers are kept until the host's connection is made again (a reconnect may reach a changed host).
Only answers are kept; a failure (unreadable file, SGLang not importable, host unreachable) is asked again next
time. Everything goes through the :class:`~specdash.hosts.base.Host` interface.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import weakref
from typing import Any

from specdash.hosts.base import ConnectionStatus, ConnState, Host, HostError
from specdash.sglang.versions import version_command

#: Config files larger than this (bytes) are not configs.
MAX_CONFIG_BYTES = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class VersionProbe:
    """``version`` (e.g. ``"0.5.9"``; None when not detected) and ``problem`` (one line saying why, else None)."""

    version: str | None
    problem: str | None = None


@dataclasses.dataclass(frozen=True)
class JsonRead:
    """One JSON file read: ``path``; ``value`` (the parsed object, None when missing or bad); ``missing`` (True when
    the file could not be read); ``problem`` (one line: ``cannot read ...``, ``... is not valid JSON (...)``,
    ``... is not a JSON object``; None when ``value`` is set)."""

    path: str
    value: dict | None
    missing: bool = False
    problem: str | None = None


def split_model_path(path: str) -> tuple[str, str]:
    """``(model_dir, config_path)`` for a model directory or a ``*.json`` config file path."""
    clean = path.rstrip("/") or "/"
    if clean.endswith(".json"):
        return posixpath.dirname(clean) or ".", clean
    return clean, posixpath.join(clean, "config.json")


class HostFacts:
    """Cached reads of one :class:`~specdash.hosts.base.Host` (get it with :func:`facts_for`)."""

    def __init__(self, host: Host) -> None:
        self._host = weakref.ref(host)  # the host keeps its facts alive (its state listener), not the reverse
        self._versions: dict[str, str] = {}
        self._json: dict[str, dict] = {}
        host.add_state_listener(self._on_status)

    @property
    def host(self) -> Host:
        """The host read (raises HostError once it is gone)."""
        host = self._host()
        if host is None:
            raise HostError("the host was closed")
        return host

    def _on_status(self, status: ConnectionStatus) -> None:
        if status.state is ConnState.CONNECTED:
            self.forget()

    def forget(self) -> None:
        """Drop every kept answer (the next reads ask the host again)."""
        self._versions.clear()
        self._json.clear()

    async def sglang_version(self, python: str = "python3") -> VersionProbe:
        """The SGLang version ``python`` imports on the host. Never raises: a host error or an interpreter
        without SGLang gives ``VersionProbe(None, problem)``."""
        known = self._versions.get(python)
        if known is not None:
            return VersionProbe(known)
        try:
            result = await self.host.run(version_command(python),
                                         timeout_s=60)
        except Exception as exc:  # noqa: BLE001 - HostError or a transport failure: said, never raised
            return VersionProbe(None, f"SGLang version not detected ({exc})")
        lines = result.stdout.strip().splitlines()
        if result.ok and lines and lines[-1].strip():
            self._versions[python] = lines[-1].strip()
            return VersionProbe(self._versions[python])
        return VersionProbe(None, f"SGLang not importable with {python} on {self.host.name}")

    async def read_json(self, path: str, what: str = "file") -> JsonRead:
        """The JSON object in ``path`` on the host (at most :data:`MAX_CONFIG_BYTES`); ``what`` names it in
        problems (``target config``). Raises HostError when the host is unreachable."""
        known = self._json.get(path)
        if known is not None:
            return JsonRead(path, known)
        data = await self.host.read_file(path, max_bytes=MAX_CONFIG_BYTES)
        if data is None:
            return JsonRead(path, None, missing=True, problem=f"cannot read the {what} {path}")
        try:
            value: Any = json.loads(data.decode("utf-8", "replace"))
        except json.JSONDecodeError as exc:
            return JsonRead(path, None, problem=f"the {what} {path} is not valid JSON ({exc.msg} at line {exc.lineno})")
        if not isinstance(value, dict):
            return JsonRead(path, None, problem=f"the {what} {path} is not a JSON object")
        self._json[path] = value
        return JsonRead(path, value)

    async def model_config(self, model_path: str, what: str = "model config") -> JsonRead:
        """The ``config.json`` of the model directory (or config file path) ``model_path``. Raises HostError when
        the host is unreachable."""
        return await self.read_json(split_model_path(model_path)[1], what)


_FACTS: weakref.WeakKeyDictionary[Host, HostFacts] = weakref.WeakKeyDictionary()


def facts_for(host: Host) -> HostFacts:
    """The one :class:`HostFacts` of ``host`` (made on first use)."""
    facts = _FACTS.get(host)
    if facts is None:
        facts = _FACTS[host] = HostFacts(host)
    return facts
