"""Read a widget's Textual stylesheet from the ``.tcss`` file next to its module."""

from __future__ import annotations

from pathlib import Path


def load_tcss(module_file: str, name: str | None = None) -> str:
    """Return the text of ``<dir of module_file>/<name>`` (default: the module's stem + ``.tcss``).

    Used as ``DEFAULT_CSS = load_tcss(__file__)`` so styles live in .tcss files, not in Python strings.
    Raises FileNotFoundError when the stylesheet is missing (a packaging bug).
    """
    path = Path(module_file)
    return (path.parent / (name or path.with_suffix(".tcss").name)).read_text(encoding="utf-8")
