"""The binding ids ``config.yaml``'s ``keymap`` section can remap: every Textual ``Binding`` with an ``id`` in the
app, the replay app, the panes and the dialogs, collected from their ``BINDINGS`` tables (so the list cannot drift
from the keys the app really has).

:func:`binding_table` gives ``{id: (default keys, description)}``; the README lists the same ids (a test checks it).
:func:`load_app_config` loads config.yaml with its keymap ids checked, for the commands that open the app.
:func:`bound_key` names the key that runs a binding, for every hint text that tells the user which key to press.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping

from textual.binding import Binding
from textual.keys import _character_to_key, format_key

from specdash.config import ConfigError, load_config
from specdash.config.loader import check_keymap
from specdash.config.schema import Config

#: ``module:class`` of every class whose BINDINGS carry ids, in the order the README lists them.
BINDING_HOLDERS = (
    "specdash.app.main:SpecdashApp",
    "specdash.app.log.pane:LogPane",
    "specdash.app.builder.pane:BuilderPane",
    "specdash.app.gpus.pane:GpuPane",
    "specdash.app.gpus.kill_modal:KillConfirmScreen",
    "specdash.app.bench.pane:BenchPane",
    "specdash.app.replay:ReplayApp",
    "specdash.app.modals.help:HelpScreen",
    "specdash.app.modals.confirm:ConfirmScreen",
    "specdash.app.bench.end_dialog:SweepEndScreen",
    "specdash.app.modals.host_key:HostKeyScreen",
)


def binding_table() -> dict[str, tuple[str, str]]:
    """Every remappable binding: id -> (default keys as Textual writes them, e.g. ``"f1,question_mark"``,
    description). The first class defining an id wins (the replay app repeats the lifecycle keys)."""
    return dict(_binding_table())


def bound_key(binding_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The key that runs ``binding_id``, as a hint names it: the first key of ``keymap`` (config.yaml's remapping,
    binding id -> comma-separated Textual key names) for that id, else of its default; ``"b"``, ``"S"``,
    ``"ctrl+r"``, ``"F3"``, ``"?"``. Raises KeyError for an id no binding has (a typo in the code, not the user's).
    Only the classes up to the one defining the id are imported (the app's own ids: none beyond the app), so a
    hint on the first frame does not import the panes the app builds after it."""
    keys = (keymap or {}).get(binding_id) or _default_binding(binding_id)[0]
    first = keys.split(",")[0].strip()
    return first.upper() if first[:1] == "f" and first[1:].isdigit() else format_key(first)


def _default_binding(binding_id: str) -> tuple[str, str]:
    """(default keys, description) of ``binding_id`` from the first holder that defines it; KeyError if none."""
    for holder in BINDING_HOLDERS:
        found = _holder_bindings(holder).get(binding_id)
        if found is not None:
            return found
    raise KeyError(binding_id)


@functools.cache
def _holder_bindings(holder: str) -> dict[str, tuple[str, str]]:
    """id -> (keys, description) of the bindings with an id of one ``module:class`` holder (imported here)."""
    module_name, _, class_name = holder.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    table: dict[str, tuple[str, str]] = {}
    for entry in getattr(cls, "BINDINGS", []):
        binding = entry if isinstance(entry, Binding) else Binding(*entry)
        if binding.id and binding.id not in table:
            table[binding.id] = (binding.key, binding.description)
    return table


@functools.cache
def _binding_table() -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for holder in BINDING_HOLDERS:
        for binding_id, entry in _holder_bindings(holder).items():
            table.setdefault(binding_id, entry)
    return table


#: Binding-id groups whose keys are live at the same time as the app's: a pane's key shadows the app's key while
#: the pane has focus, so one key in both would do two different things (the dialogs take every key while open).
APP_GROUPS = ("app", "server")
#: the replay app's own keys, live beside the app-level ones (it repeats the lifecycle keys); a pane's key may
#: shadow one of them while that pane has focus (``space``: play/pause, or tag in the GPU pane)
REPLAY_GROUP = "replay"
PANE_GROUPS = ("log", "builder", "gpus", "bench")
#: dialog bindings that live in a pane group's name (the kill confirmation): not live beside the app's keys
DIALOG_IDS = frozenset({"gpus.kill_confirm", "gpus.kill_cancel"})
#: groups of a dialog's own keys, live alone while it is open
DIALOG_GROUPS = ("help", "confirm", "sweep", "hostkey")


def key_name(key: str) -> str:
    """``key`` (one key as config.yaml or a ``BINDINGS`` table writes it) as Textual matches it: a single character
    by its name (``"?"`` -> ``"question_mark"``, as :class:`textual.binding.Binding` does), else as written."""
    key = key.strip()
    return _character_to_key(key) if len(key) == 1 else key


def key_clashes(keymap: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """Keys bound to two bindings that are live at the same time, with the defaults of :func:`binding_table` and
    ``keymap`` (binding id -> comma-separated keys, config.yaml) applied: an app-level binding (groups
    :data:`APP_GROUPS`) and a pane's (:data:`PANE_GROUPS`) or the replay app's, two app-level ones, two of one pane
    or of one dialog.
    ``[(key, binding id, the other binding id listed before it)]`` (``"?"`` and ``"question_mark"`` are one key),
    empty when every key does one thing."""
    table = binding_table()
    overrides = keymap or {}

    def keys(binding_id: str) -> set[str]:
        text = overrides.get(binding_id) or table[binding_id][0]
        return {key_name(part) for part in text.split(",") if part.strip()}

    def group(binding_id: str) -> str:
        return "dialog:" + binding_id if binding_id in DIALOG_IDS else binding_id.split(".")[0]

    scopes = [set(APP_GROUPS) | {pane} for pane in (*PANE_GROUPS, REPLAY_GROUP)] + [{name} for name in DIALOG_GROUPS]
    scopes.append({"dialog:" + binding_id for binding_id in DIALOG_IDS})
    clashes: list[tuple[str, str, str]] = []
    for scope in scopes:
        seen: dict[str, str] = {}
        for binding_id in table:
            if group(binding_id) not in scope:
                continue
            for key in sorted(keys(binding_id)):
                clash = (key, binding_id, seen[key]) if key in seen else None
                if clash is not None and clash not in clashes:
                    clashes.append(clash)
                seen.setdefault(key, binding_id)
    return clashes


def _check_key_names(config: Config) -> None:
    """Every key config.yaml's ``keymap`` sets is one Textual can match: not empty, and lower case unless it is a
    single character (Textual's key names are ``f12``, ``ctrl+x``, ``escape``; ``F12`` or ``Ctrl+x`` would never
    fire while the hints named them). Raises :class:`~specdash.config.ConfigError`."""
    for binding_id, text in config.keymap.items():
        for part in str(text).split(","):
            key = part.strip()
            if not key or (len(key) > 1 and key != key.lower()):
                what = (f"{key!r} is not a key name: Textual's are lower case ({key.lower()!r}); a single character "
                        "is written as typed ('S', '?')") if key else "an empty key name"
                raise ConfigError(config.source, config.key_lines.get(f"keymap.{binding_id}"),
                                  f"keymap.{binding_id}", what)


def load_app_config() -> Config:
    """:func:`specdash.config.load_config`, then every ``keymap`` id checked against :func:`binding_table` and
    the keys it sets against the app's other keys (:func:`key_clashes`). Raises
    :class:`~specdash.config.ConfigError` (one line: file, line, key, problem)."""
    config = load_config()
    if config.keymap:
        check_keymap(config, binding_table())
        _check_key_names(config)
        for key, pane_id, app_id in key_clashes(dict(config.keymap)):
            mine = pane_id if pane_id in config.keymap else app_id
            other = app_id if mine == pane_id else pane_id
            raise ConfigError(config.source, config.key_lines.get(f"keymap.{mine}"), f"keymap.{mine}",
                              f"{format_key(key)!r} is also the key of {other} ({binding_table()[other][1]}); choose "
                              "another key")
    return config


def key_for(node: object, binding_id: str) -> str:
    """:func:`bound_key` with the keymap of the app ``node`` (a widget, a screen or the app) runs in
    (``keymap_overrides``, set from config.yaml); the default key when it runs in none or its app has no keymap."""
    try:
        app = getattr(node, "app", None)
    except Exception:  # noqa: BLE001 - Textual raises when the node runs in no app: the defaults apply
        app = None
    return bound_key(binding_id, getattr(app, "keymap_overrides", None))
