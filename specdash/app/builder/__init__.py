"""The launch-builder pane: edit an SGLang launch command with live, version-aware validation."""

from specdash.app.builder.pane import BuilderPane

__all__ = ["BuilderPane"]
