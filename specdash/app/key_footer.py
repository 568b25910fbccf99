"""The key footer: Textual's ``Footer``, recomposed only when the keys it would show change.

Textual rebuilds the footer (one ``FooterKey`` widget per key, each restyled) on every bindings signal: a focus
change, a screen resume, any ``refresh_bindings``. At start-up three signals come within a few frames with the
same keys, and each rebuild costs about as much CPU as painting the log's first lines. The footer's content is a
function of the screen's active bindings (binding, enabled, tooltip) and whether the command palette key is shown,
so a rebuild with the same of both is skipped.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer


class KeyFooter(Footer):
    """``Footer`` that skips a recompose which would show the same keys (see the module docstring)."""

    _shown: Any = None  # what the last recompose showed (see _keys_shown)

    def _keys_shown(self) -> Any:
        """What ``Footer.compose`` reads: the active bindings with their state, and the palette key's switches."""
        if not self._bindings_ready:
            return None
        try:
            active = self.screen.active_bindings
        except Exception:  # noqa: BLE001 - no screen (being removed): let Footer decide
            return object()  # never equal: recompose
        return (tuple((binding, enabled, tooltip) for _node, binding, enabled, tooltip in active.values()),
                self.show_command_palette, self.combine_groups)

    async def recompose(self) -> None:
        shown = self._keys_shown()
        if shown is not None and shown == self._shown and self.children:
            return
        self._shown = shown
        await super().recompose()
