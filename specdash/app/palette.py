"""Command-palette entries (``ctrl+p``) for every key binding of the app and of each pane.

The entries are read from the same ``BINDINGS`` the footer and the help screen show, so a key added to a pane is in
the palette without a second list to keep. Each entry is titled ``"<pane>: <description>"`` and shows the key that
runs it (after the config's keymap remapping). Choosing one brings its pane forward (its tab, or focus for the GPU
pane) and runs the same action the key runs, so the ``--readonly`` checks inside those actions apply here too; in a
read-only session the mutating actions are not offered at all.

Wire-up (app): ``COMMANDS = App.COMMANDS | {PaneActions}``.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from specdash.app.readonly_keys import MUTATING_BINDINGS

#: (section title, tab to show first or None, the app attribute holding the pane, where its class lives)
_PANES: tuple[tuple[str, str | None, str, str], ...] = (
    ("Log", "log", "log_pane", "specdash.app.log.pane:LogPane"),
    ("Builder", "builder", "builder_pane", "specdash.app.builder.pane:BuilderPane"),
    ("Benchmarks", "bench", "bench_pane", "specdash.app.bench.pane:BenchPane"),
    ("GPUs", None, "gpu_pane", "specdash.app.gpus.pane:GpuPane"),
)


def key_display(app: Any, keys: str) -> str:
    """The keys of a binding as the footer shows them: ``"f1,question_mark"`` → ``"f1 or ?"``,
    ``"ctrl+f"`` → ``"^f"`` (Textual's ``App.get_key_display`` for each comma-separated key)."""
    parts = [part.strip() for part in keys.split(",") if part.strip()]
    shown: list[str] = []
    for part in parts:
        try:
            label = app.get_key_display(Binding(part, ""))
        except Exception:  # a key Textual cannot parse is shown as written
            label = part
        if label not in shown:
            shown.append(label)
    return " or ".join(shown)


@dataclasses.dataclass(frozen=True)
class PaletteEntry:
    """One palette entry: ``title`` (``"Log: Next error"``), ``key`` (the key(s) that run it, as configured and
    Textual names them: ``"f1,question_mark"``; :func:`key_display` shows them as the footer does),
    ``action`` (Textual action string, parameters included), ``pane`` (the app attribute holding the pane that
    runs it, None for the app itself), ``tab`` (the tab shown before it runs, or None)."""

    title: str
    key: str
    action: str
    pane: str | None
    tab: str | None


def _keys(binding: Binding, keymap: dict[str, str]) -> str:
    return keymap.get(binding.id or "", binding.key) if binding.id else binding.key


def _bindings_of(cls: type) -> list[Binding]:
    """The ``Binding`` objects declared by ``cls`` and its specdash bases (first declaration of an id wins;
    Textual's own bindings are offered by its own palette commands)."""
    seen: dict[str, Binding] = {}
    for klass in cls.__mro__:
        if not klass.__module__.startswith("specdash"):
            continue
        for binding in klass.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding) and binding.description:
                seen.setdefault(binding.id or f"{binding.key}:{binding.action}", binding)
    return list(seen.values())


def _pane_class(where: str) -> type:
    module, name = where.split(":")
    return getattr(importlib.import_module(module), name)


def palette_entries(app: Any) -> list[PaletteEntry]:
    """Every action the keys of ``app`` and of its panes can run (a pane the app does not have is left out; a
    deferred pane not built yet is listed from its class), minus the mutating ones in a read-only session."""
    keymap: dict[str, str] = dict(getattr(app, "keymap_overrides", {}) or {})
    readonly = bool(getattr(app, "readonly", False))
    entries: list[PaletteEntry] = []

    def add(section: str, cls: type, pane: str | None, tab: str | None) -> None:
        for binding in _bindings_of(cls):
            if readonly and binding.id in MUTATING_BINDINGS:
                continue
            if binding.action in ("quit", "command_palette"):
                continue
            entries.append(PaletteEntry(f"{section}: {binding.description}", _keys(binding, keymap),
                                        binding.action, pane, tab))

    add("Console", type(app), None, None)
    for section, tab, attribute, where in _PANES:
        if not hasattr(type(app), attribute):
            continue
        add(section, _pane_class(where), attribute, tab)
    return entries


class PaneActions(Provider):
    """Offers :func:`palette_entries` in the command palette."""

    async def _run(self, entry: PaletteEntry) -> None:
        app = self.app
        target: Any = app
        if entry.pane is not None:
            if entry.tab is not None:
                await app.run_action(f"show_tab('{entry.tab}')")
            target = getattr(app, entry.pane, None)
            if target is None:
                return
            if entry.tab is None:
                target.focus()
        await app.run_action(entry.action, target)

    def _hits(self) -> list[PaletteEntry]:
        try:
            return palette_entries(self.app)
        except Exception:  # never break the palette over one pane
            return []

    async def discover(self) -> Hits:
        for entry in self._hits():
            yield DiscoveryHit(entry.title, lambda e=entry: self.app.run_worker(self._run(e)),
                               help=f"key: {key_display(self.app, entry.key)}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._hits():
            score = matcher.match(entry.title)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.title), lambda e=entry: self.app.run_worker(self._run(e)),
                          help=f"key: {key_display(self.app, entry.key)}")
