"""Command-palette entries for the GPU pane (``ctrl+p``): kill focused/tagged, tag, untag.

Wire-up (app): ``COMMANDS = App.COMMANDS | {GpuCommands}``. Each command calls the pane's own action, so the
``--readonly`` check inside :meth:`GpuPane.action_kill` applies here too.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from specdash.app.gpus.pane import GpuPane

_COMMANDS = (
    ("GPUs: kill tagged or focused processes", "kill", "SIGTERM/SIGKILL by process group after confirmation"),
    ("GPUs: tag / untag focused process", "tag", "mark a process row for K"),
    ("GPUs: untag all", "untag_all", "clear every tag"),
)


class GpuCommands(Provider):
    """Offers the GPU pane's actions in the command palette when a :class:`GpuPane` is on screen."""

    def _pane(self) -> GpuPane | None:
        try:
            return self.app.query_one(GpuPane)
        except Exception:  # no GPU pane in this screen
            return None

    async def discover(self) -> Hits:
        pane = self._pane()
        if pane is None:
            return
        for title, action, help_text in _COMMANDS:
            yield DiscoveryHit(title, partial(getattr(pane, f"action_{action}")), help=help_text)

    async def search(self, query: str) -> Hits:
        pane = self._pane()
        if pane is None:
            return
        matcher = self.matcher(query)
        for title, action, help_text in _COMMANDS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(getattr(pane, f"action_{action}")), help=help_text)
