"""Themes: the shipped ones come from the package (so a wheel has them), user themes from the config dir."""

from __future__ import annotations

from specdash.app.themes import available_theme_names, load_themes, shipped_theme_names, theme_problems


def test_shipped_themes_load_from_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no user themes
    monkeypatch.delenv("SPECDASH_THEMES_DIR", raising=False)
    assert shipped_theme_names() == ["high-contrast", "specdash-dark", "specdash-light"]
    themes = load_themes()
    assert set(themes) == {"high-contrast", "specdash-dark", "specdash-light"}
    assert themes["specdash-dark"].dark and not themes["specdash-light"].dark
    assert {"specdash-dark", "textual-dark"} <= set(available_theme_names())


def test_user_themes_from_the_config_dir_add_and_override(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("SPECDASH_THEMES_DIR", raising=False)
    folder = tmp_path / "specdash" / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text('dark: true\nprimary: "#112233"\n')
    (folder / "specdash-dark.yaml").write_text('name: specdash-dark\ndark: true\nprimary: "#445566"\n')
    (folder / "broken.yaml").write_text("primary: [not, a, colour\n")
    themes = load_themes()
    assert themes["mine"].primary == "#112233"  # name from the file name
    assert themes["specdash-dark"].primary == "#445566"  # the user's file wins over the shipped one
    assert "high-contrast" in themes
    assert len(theme_problems()) == 1 and "broken.yaml" in theme_problems()[0]
    assert "mine" in available_theme_names()


def test_the_example_theme_in_the_repository_loads_as_a_user_theme(monkeypatch, tmp_path):
    from pathlib import Path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("SPECDASH_THEMES_DIR", str(Path(__file__).resolve().parent.parent / "themes"))
    themes = load_themes()
    assert "my-theme" in themes and themes["my-theme"].dark
    assert theme_problems() == []
