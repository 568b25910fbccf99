"""Loading the config file into :class:`~specdash.config.schema.Config`, with one clear line per mistake.

:func:`load_config` reads YAML (safe loader), checks every key and value against the typed schema, applies
``SPECDASH_<FIELD>`` environment overrides and returns the dataclasses. Any mistake raises :class:`ConfigError`
whose message is one line naming the file, the line and the key, e.g.::

    /home/a/.config/specdash/config.yaml:7: hosts.gpu1.port: expected an integer, got 'twenty'
    /home/a/.config/specdash/config.yaml:3: hots: unknown key (did you mean 'hosts'?)
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import types
import typing
from pathlib import Path
from typing import Any, Union

import yaml

from specdash import paths
from specdash.config.schema import Config

ENV_PREFIX = "SPECDASH_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
#: Values a config file may hold once YAML aliases are expanded.
MAX_CONFIG_NODES = 100_000


class ConfigError(Exception):
    """A config file (or ``SPECDASH_*`` variable) that cannot be used. ``str()`` is one line:
    ``FILE:LINE: KEY: problem``. Attributes: ``path`` (Path or None), ``line`` (1-based or None), ``key``
    (dotted, e.g. ``hosts.gpu1.port``; None for the whole file), ``problem``."""

    def __init__(self, path: Path | None, line: int | None, key: str | None, problem: str):
        self.path, self.line, self.key, self.problem = path, line, key, problem
        where = str(path) if path is not None else ""
        if line is not None:
            where += f":{line}"
        text = f"{key}: {problem}" if key else problem
        super().__init__(f"{where}: {text}" if where else text)


class _Lines:
    """Line numbers (1-based) of every key path in the YAML node tree; finds duplicate keys."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.by_path: dict[tuple[Any, ...], int] = {}
        self.nodes = 0

    def walk(self, node: yaml.Node, key_path: tuple[Any, ...] = (), _open: frozenset[int] = frozenset()) -> None:
        """Record ``node``'s lines. Raises ConfigError for an alias that contains itself (``a: &x [*x]``, which
        would recurse forever) and for more than :data:`MAX_CONFIG_NODES` values (aliases expanding)."""
        if id(node) in _open:
            raise ConfigError(self.path, node.start_mark.line + 1, _dotted(key_path) or None,
                              "a YAML alias refers to the value that contains it (recursive alias)")
        self.nodes += 1
        if self.nodes > MAX_CONFIG_NODES:
            raise ConfigError(self.path, node.start_mark.line + 1, None,
                              f"more than {MAX_CONFIG_NODES:,} values (YAML aliases expanding?)")
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            _open = _open | {id(node)}
        self.by_path.setdefault(key_path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key_node)
                child = key_path + (key,)
                if key in seen:
                    raise ConfigError(self.path, key_node.start_mark.line + 1, _dotted(child), "duplicate key")
                seen.add(key)
                self.by_path[child] = key_node.start_mark.line + 1
                self.walk(value_node, child, _open)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, key_path + (index,), _open)

    def line(self, key_path: tuple[Any, ...]) -> int | None:
        while key_path not in self.by_path and key_path:
            key_path = key_path[:-1]
        return self.by_path.get(key_path)


def _dotted(key_path: tuple[Any, ...]) -> str:
    out = ""
    for part in key_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _type_name(tp: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(tp, "a value")


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return repr(value)


class _Converter:
    def __init__(self, path: Path, lines: _Lines | None) -> None:
        self.path = path
        self.lines = lines

    def fail(self, key_path: tuple[Any, ...], problem: str) -> ConfigError:
        line = self.lines.line(key_path) if self.lines else None
        return ConfigError(self.path, line, _dotted(key_path) or None, problem)

    def convert(self, tp: Any, value: Any, key_path: tuple[Any, ...], meta: Any = None) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin in (Union, types.UnionType):
            if value is None and type(None) in args:
                return None
            options = [a for a in args if a is not type(None)]
            if len(options) == 1:
                return self.convert(options[0], value, key_path, meta)
            if isinstance(value, (str, int, float, bool)) or value is None:
                return value  # a scalar of any listed type (sweep flags)
            raise self.fail(key_path, f"expected a single value, got {_describe(value)}")
        if dataclasses.is_dataclass(tp):
            return self.dataclass(tp, value, key_path)
        if origin is dict:
            if value is None:
                return {}
            if not isinstance(value, dict):
                raise self.fail(key_path, f"expected a mapping, got {_describe(value)}")
            return {str(k): self.convert(args[1], v, key_path + (k,)) for k, v in value.items()}
        if origin is list:
            if value is None:
                return []
            if not isinstance(value, list):
                raise self.fail(key_path, f"expected a list, got {_describe(value)}")
            return [self.convert(args[0], v, key_path + (i,)) for i, v in enumerate(value)]
        return self.scalar(tp, value, key_path, meta or {})

    def scalar(self, tp: Any, value: Any, key_path: tuple[Any, ...], meta: Any) -> Any:
        if tp is bool:
            if not isinstance(value, bool):
                raise self.fail(key_path, f"expected true or false, got {_describe(value)}")
        elif tp is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(key_path, f"expected an integer, got {_describe(value)}")
        elif tp is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(key_path, f"expected a number, got {_describe(value)}")
            value = float(value)
            if not math.isfinite(value):  # .nan passes every min/max comparison
                raise self.fail(key_path, f"expected a finite number, got {value!r}")
        elif tp is str:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # e.g. sglang_version: 0.5 or a bare port-like string
            if not isinstance(value, str):
                raise self.fail(key_path, f"expected a string, got {_describe(value)}")
        if "choices" in meta and value not in meta["choices"]:
            raise self.fail(key_path, f"expected one of {', '.join(meta['choices'])}, got {_describe(value)}")
        if "min" in meta and value < meta["min"]:
            raise self.fail(key_path, f"must be at least {meta['min']}, got {value!r}")
        if "max" in meta and value > meta["max"]:
            raise self.fail(key_path, f"must be at most {meta['max']}, got {value!r}")
        return value

    def dataclass(self, cls: Any, value: Any, key_path: tuple[Any, ...]) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise self.fail(key_path, f"expected a mapping, got {_describe(value)}")
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
        kwargs = {}
        for key, item in value.items():
            if key not in fields:
                close = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(fields)})"
                raise self.fail(key_path + (key,), f"unknown key{hint}")
            field = fields[key]
            kwargs[key] = self.convert(hints[key], item, key_path + (key,), field.metadata)
        for name, field in fields.items():
            if field.metadata.get("required") and not kwargs.get(name):
                raise self.fail(key_path, f"missing required key '{name}'")
        return cls(**kwargs)


def _check_references(config: Config, conv: _Converter) -> None:
    if config.default_host is not None and config.hosts and config.default_host not in config.hosts:
        raise conv.fail(("default_host",), f"no host named {config.default_host!r} under hosts "
                                           f"(known: {', '.join(config.hosts)})")
    for name, workload in config.workloads.items():
        if workload.preset and workload.file:
            raise conv.fail(("workloads", name), "give either 'preset' or 'file', not both")
    for binding_id, keys in config.keymap.items():
        if not [k for k in keys.split(",") if k.strip()]:
            raise conv.fail(("keymap", binding_id), "no key given")


def _env_overrides(config: Config, path: Path) -> None:
    hints = typing.get_type_hints(Config)
    for field in dataclasses.fields(Config):
        if field.metadata.get("internal"):
            continue
        var = ENV_PREFIX + field.name.upper()
        raw = os.environ.get(var)
        if raw is None:
            continue
        tp = hints[field.name]
        options = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
        base = options[0]
        if base not in (str, int, float, bool):
            continue  # only scalar settings are overridable
        try:
            if base is bool:
                if raw.strip().lower() not in _TRUE | _FALSE:
                    raise ValueError
                value: Any = raw.strip().lower() in _TRUE
            elif base is float:
                value = float(raw)
            elif base is int:
                value = int(raw)
            else:
                value = raw
        except ValueError:
            raise ConfigError(None, None, None, f"environment {var}={raw!r}: expected {_type_name(base)}") from None
        conv = _Converter(path, None)
        try:
            value = conv.scalar(base, value, (field.name,), field.metadata)
        except ConfigError as exc:
            raise ConfigError(None, None, None, f"environment {var}: {exc.problem}") from None
        setattr(config, field.name, value)
        config.env_overrides.append(var)


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load the config: ``path``, else ``$SPECDASH_CONFIG``, else ``$XDG_CONFIG_HOME/specdash/config.yaml``.

    The default file may be absent (defaults are returned); an explicitly named file (argument or
    ``SPECDASH_CONFIG``) must exist. ``SPECDASH_<FIELD>`` variables override top-level scalars
    (``SPECDASH_THEME=light``). Raises :class:`ConfigError` (one line: file, line, key, problem) for a missing
    named file, unreadable file, invalid YAML, unknown key, wrong type or value out of range.
    """
    explicit = path is not None or bool(os.environ.get(paths.ENV_CONFIG))
    file = Path(path).expanduser() if path is not None else paths.config_file()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(file, None, None, "no such config file") from None
        text = ""
    except UnicodeDecodeError as exc:
        raise ConfigError(file, None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(file, None, None, f"cannot read: {exc.strerror or exc}") from None

    lines = _Lines(file)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(file, mark.line + 1 if mark else None, None, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, None, None, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    if node is not None:
        try:
            lines.walk(node)
        except RecursionError:
            raise ConfigError(file, None, None, "nested too deeply") from None

    conv = _Converter(file, lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(file, 1, None, f"expected a mapping of settings at the top, got {_describe(data)}")
    config = conv.dataclass(Config, data, ())
    config.source = file if file.exists() else None
    config.key_lines = {_dotted(key_path): line for key_path, line in lines.by_path.items() if key_path}
    _check_references(config, conv)
    _env_overrides(config, file)
    return config


def check_keymap(config: Config, binding_ids: typing.Collection[str]) -> None:
    """Check that every ``keymap`` key of ``config`` is one of ``binding_ids`` (the app's remappable bindings:
    :func:`specdash.app.keymap.binding_table`). Raises :class:`ConfigError` for the first unknown id, naming the
    file and line and the closest known id (``keymap.gpus.kil: unknown binding id (did you mean 'gpus.kill'?)``)."""
    known = sorted(binding_ids)
    for binding_id in config.keymap:
        if binding_id in binding_ids:
            continue
        close = difflib.get_close_matches(binding_id, known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else "the README lists the binding ids"
        key = f"keymap.{binding_id}"
        raise ConfigError(config.source, config.key_lines.get(key), key, f"unknown binding id ({hint})")
