"""Load the Textual themes shipped in the repository's ``themes/`` folder (YAML, one theme per file).

Search order: ``$SPECDASH_THEMES_DIR``, the ``themes/`` folder next to the package (source checkout or editable
install), then ``<config dir>/themes``. Each file holds Textual ``Theme`` fields (name, dark, primary, secondary,
accent, warning, error, success, foreground, background, surface, panel, optional ``variables``).
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from textual.theme import Theme

DEFAULT_THEME = "specdash-dark"
_FIELDS = ("primary", "secondary", "accent", "warning", "error", "success", "foreground", "background",
           "surface", "panel", "boost", "dark", "variables")


def theme_dirs() -> list[Path]:
    """Folders searched for theme files, first wins."""
    dirs = []
    if os.environ.get("SPECDASH_THEMES_DIR"):
        dirs.append(Path(os.environ["SPECDASH_THEMES_DIR"]))
    dirs.append(Path(__file__).resolve().parents[2] / "themes")
    from specdash.paths import config_dir

    dirs.append(Path(config_dir()) / "themes")
    return [d for d in dirs if d.is_dir()]


def load_themes() -> dict[str, Theme]:
    """All themes found, by name. A malformed file is skipped (its name is reported by :func:`theme_problems`)."""
    themes: dict[str, Theme] = {}
    for folder in reversed(theme_dirs()):
        for path in sorted(folder.glob("*.yaml")):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
                name = str(data.get("name") or path.stem)
                themes[name] = Theme(name=name, **{k: data[k] for k in _FIELDS if k in data})
            except Exception as exc:  # noqa: BLE001 - reported, never fatal
                _PROBLEMS.append(f"{path}: {exc}")
    return themes


_PROBLEMS: list[str] = []


def theme_problems() -> list[str]:
    """One line per theme file that could not be loaded."""
    return list(_PROBLEMS)


def available_theme_names() -> list[str]:
    """Names accepted by ``--theme``: the shipped themes, then Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return sorted(load_themes()) + sorted(BUILTIN_THEMES)
