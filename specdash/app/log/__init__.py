"""The log pane: live server log, findings, metrics strip, start-up progress (see :mod:`.pane`)."""

from specdash.app.log.pane import LogPane

__all__ = ["LogPane"]
