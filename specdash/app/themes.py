"""Load the Textual themes: the ones shipped in the :mod:`specdash.themes` package and the user's (YAML, one theme
per file).

Sources, a later one winning for a name both define: the shipped themes (package data, read with
:mod:`importlib.resources`, so a wheel install has them), ``<config dir>/themes/*.yaml`` (``specdash locate
themes``), then ``$SPECDASH_THEMES_DIR``. Each file holds Textual ``Theme`` fields (name, dark, primary,
secondary, accent, warning, error, success, foreground, background, surface, panel, boost, optional
``variables``); ``name`` defaults to the file name without ``.yaml``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import yaml
from textual.theme import Theme

DEFAULT_THEME = "specdash-dark"
_FIELDS = ("primary", "secondary", "accent", "warning", "error", "success", "foreground", "background",
           "surface", "panel", "boost", "dark", "variables")


def user_theme_dirs() -> list[Path]:
    """Folders of user themes that exist, in loading order (a later one wins): ``<config dir>/themes``, then
    ``$SPECDASH_THEMES_DIR``."""
    from specdash.paths import themes_dir

    dirs = [themes_dir()]
    if os.environ.get("SPECDASH_THEMES_DIR"):
        dirs.append(Path(os.environ["SPECDASH_THEMES_DIR"]).expanduser())
    return [d for d in dirs if d.is_dir()]


def shipped_theme_names() -> list[str]:
    """Names of the themes shipped in the package, sorted."""
    return sorted(name for name, _text in _shipped_files())


def _shipped_files() -> Iterator[tuple[str, str]]:
    """(file stem, YAML text) of each shipped theme file."""
    for entry in resources.files("specdash.themes").iterdir():
        if entry.name.endswith(".yaml") and entry.is_file():
            yield entry.name.removesuffix(".yaml"), entry.read_text(encoding="utf-8")


def _theme_from_yaml(text: str, stem: str) -> Theme:
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("not a mapping of Theme fields")
    name = str(data.get("name") or stem)
    return Theme(name=name, **{k: data[k] for k in _FIELDS if k in data})


def load_themes() -> dict[str, Theme]:
    """All themes found, by name. A malformed user file is skipped (its name is reported by
    :func:`theme_problems`)."""
    _PROBLEMS.clear()
    themes: dict[str, Theme] = {}
    for stem, text in _shipped_files():
        theme = _theme_from_yaml(text, stem)
        themes[theme.name] = theme
    for folder in user_theme_dirs():
        for path in sorted(folder.glob("*.yaml")):
            try:
                theme = _theme_from_yaml(path.read_text(encoding="utf-8"), path.stem)
            except Exception as exc:  # noqa: BLE001 - reported, never fatal
                _PROBLEMS.append(f"{path}: {exc}")
                continue
            themes[theme.name] = theme
    return themes


_PROBLEMS: list[str] = []


def theme_problems() -> list[str]:
    """One line per theme file that could not be loaded."""
    return list(_PROBLEMS)


def available_theme_names() -> list[str]:
    """Names accepted by ``--theme``: the shipped and user themes, then Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return sorted(load_themes()) + sorted(BUILTIN_THEMES)
