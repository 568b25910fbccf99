"""KeyFooter: Textual's key footer that never cuts a key at the screen's edge.

Textual's ``Footer`` lists every shown binding of the focused pane, the app and the replay in one row and lets the
terminal cut the rest (at 80 columns ``... f1 Help l Launch x`` lost Stop and Restart). This footer keeps the keys
that matter in the pane in view and drops the others, least important first, until the row fits its width; when
it drops any, the help key reads ``f1 All keys`` (the help screen lists every key). The order on screen stays the
bindings' own order.

:data:`FOOTER_PRIORITY` ranks binding ids (lower: kept longer); the help key (``app.help``) is never dropped.
:func:`fit_keys` is the pure selection (cells, not pixels): items are ``(binding id, label width in cells)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: binding id -> rank (lower: kept longer when the row is too narrow). Ids not listed rank :data:`DEFAULT_PRIORITY`.
FOOTER_PRIORITY: dict[str, int] = {
    "app.help": 0,
    # replay: moving through the recording is what the replay is for
    "replay.pause": 10, "replay.next_finding": 11, "replay.seek": 12, "replay.step_forward": 13, "replay.faster": 35,
    # builder
    "builder.leave_editor": 10, "builder.apply_fix": 11, "builder.dry_run": 20, "builder.copy": 21,
    # benchmarks
    "bench.run": 10, "bench.sweep": 11, "bench.cancel": 12, "bench.open": 30,
    # GPUs
    "gpus.kill": 10, "gpus.tag": 11,
    # log
    "log.findings": 10, "log.wrap": 11, "log.filter": 12, "log.next_error": 16, "log.follow": 17,
    "log.next_warning": 20, "log.next_hit": 40,
    # the server, from every pane: stop first (the key a user looks for on a live server), then launch; restart
    # is stop + launch
    "server.stop": 14, "server.launch": 15, "server.restart": 26,
}
DEFAULT_PRIORITY = 30
HELP_ID = "app.help"
#: the help key's description when keys were left out of the row
MORE_KEYS = "All keys"


def key_width(key_display: str, description: str, compact: bool) -> int:
    """Cells one FooterKey takes (Textual 8's CSS): compact ``key desc`` plus a 1-cell margin; otherwise
    `` key desc `` (key padding 1 each side, description padding 1 on the right), no margin."""
    text = cell_len(key_display) + (cell_len(description) + 1 if description else 0)
    return text + (1 if compact else 2)


def fit_keys(items: Sequence[tuple[str, int]], width: int) -> list[int]:
    """Indexes of ``items`` (binding id, width in cells) to show within ``width`` cells, in their order: the
    lowest-ranked (highest :data:`FOOTER_PRIORITY`; among equals the later one) are dropped first; the help key
    stays even when it alone is too wide. ``width`` <= 0 keeps only the help key."""
    keep = list(range(len(items)))
    total = sum(w for _, w in items)
    by_rank = sorted(keep, key=lambda i: (FOOTER_PRIORITY.get(items[i][0], DEFAULT_PRIORITY), i), reverse=True)
    for i in by_rank:
        if total <= width:
            break
        if items[i][0] == HELP_ID:
            continue
        keep.remove(i)
        total -= items[i][1]
    return keep


class KeyFooter(Footer):
    """The app's footer: the pane's keys that fit, then ``f1 All keys`` when some were left out (see module doc).
    Recomposes when the bindings, its width or its compact style change, and only then: Textual asks for a
    recompose on every bindings signal (a focus change, a screen resume, any ``refresh_bindings``; three come within
    a few frames at start-up with the same keys), each one rebuilding every key widget. ``shown_ids``: the binding
    ids (or actions, for a binding without id) in the row now."""

    shown_ids: list[str] = []
    _shown: object = None  # what the last recompose was made from (see _inputs)

    def _inputs(self) -> object:
        """What :meth:`compose` reads: the active bindings with their state, the width and the compact style (None:
        the bindings are not ready, nothing to compare)."""
        if not self._bindings_ready:
            return None
        try:
            active = self.screen.active_bindings
        except Exception:  # noqa: BLE001 - no screen (being removed): let Footer decide
            return object()  # never equal: recompose
        return (tuple((binding, enabled, tooltip) for _node, binding, enabled, tooltip in active.values()),
                self.size.width or self.app.size.width, self.compact)

    async def recompose(self) -> None:
        inputs = self._inputs()
        if inputs is not None and inputs == self._shown and self.children:
            return  # the same keys at the same width: the row on screen is already this
        self._shown = inputs
        await super().recompose()

    def on_resize(self) -> None:
        if self.is_attached:
            self.call_after_refresh(self.recompose)

    def _watch_compact(self) -> None:
        if self.is_attached:
            self.call_after_refresh(self.recompose)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        seen: set[str] = set()
        entries = []
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:  # one key per action, as Textual's footer does
                continue
            seen.add(binding.action)
            entries.append((binding, enabled, tooltip))
        width = self.size.width or self.app.size.width
        compact = self.compact
        items = [(b.id or b.action, key_width(self.app.get_key_display(b), b.description, compact))
                 for b, _, _ in entries]
        keep = fit_keys(items, width)
        if len(keep) < len(entries):  # the help key says the rest is there ("f1 All keys"): fit again with it
            items = [(bid, key_width(self.app.get_key_display(b), MORE_KEYS, compact) if bid == HELP_ID else w)
                     for (bid, w), (b, _, _) in zip(items, entries, strict=True)]
            keep = fit_keys(items, width)
        self.shown_ids = [items[i][0] for i in keep]
        for i in keep:
            binding, enabled, tooltip = entries[i]
            description = binding.description
            if binding.id == HELP_ID and len(keep) < len(entries):
                description = MORE_KEYS
            yield FooterKey(binding.key, self.app.get_key_display(binding), description, binding.action,
                            disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)
