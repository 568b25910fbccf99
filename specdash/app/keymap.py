"""The binding ids ``config.yaml``'s ``keymap`` section can remap: every Textual ``Binding`` with an ``id`` in the
app, the replay app, the panes and the dialogs, collected from their ``BINDINGS`` tables (so the list cannot drift
from the keys the app really has).

:func:`binding_table` gives ``{id: (default keys, description)}``; the README lists the same ids (a test checks it).
:func:`load_app_config` loads config.yaml with its keymap ids checked, for the commands that open the app.
"""

from __future__ import annotations

import importlib

from textual.binding import Binding

from specdash.config import load_config
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
    "specdash.app.modals.host_key:HostKeyScreen",
)


def binding_table() -> dict[str, tuple[str, str]]:
    """Every remappable binding: id -> (default keys as Textual writes them, e.g. ``"f1,question_mark"``,
    description). The first class defining an id wins (the replay app repeats the lifecycle keys)."""
    table: dict[str, tuple[str, str]] = {}
    for holder in BINDING_HOLDERS:
        module_name, _, class_name = holder.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        for entry in getattr(cls, "BINDINGS", []):
            binding = entry if isinstance(entry, Binding) else Binding(*entry)
            if binding.id and binding.id not in table:
                table[binding.id] = (binding.key, binding.description)
    return table


def load_app_config() -> Config:
    """:func:`specdash.config.load_config`, then every ``keymap`` id checked against :func:`binding_table`.
    Raises :class:`~specdash.config.ConfigError` (one line: file, line, key, problem)."""
    config = load_config()
    if config.keymap:
        check_keymap(config, binding_table())
    return config
