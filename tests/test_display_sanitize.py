"""The display sanitizer: escapes, C0/C1 controls and bidi overrides never reach the terminal; outside text placed
into markup is shown literally (a `--log` path with `[/b]` in it does not crash the console); log lines in the pane
lose U+009B and U+202E."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.content import Content

from specdash.app.log import LogPane
from specdash.logs.parser import LogParser
from specdash.text.display import clean, escape_markup, markup

HOSTILE = "ok\x1b]0;title\x07\x1b[2J\x1bc\x9b31m\x9d0;t\x9c\u202eevil\u2066x\u2069\x00\x08\x7f\x85end"


def test_clean_removes_escapes_controls_and_bidi():
    out = clean(HOSTILE)
    assert out == "okevilxend"
    assert clean("a\tb\nc") == "a   b c"
    assert clean("a\nb", newlines=True) == "a\nb"
    assert clean("x" * 50, max_chars=10) == "x" * 10 + "… [40 more characters]"
    assert clean("caf\u00e9 \u4e2d\u6587 \u2014 ok") == "caf\u00e9 \u4e2d\u6587 \u2014 ok"  # printable Unicode kept
    assert clean("lone \udcff surrogate") == "lone  surrogate"


@pytest.mark.parametrize("text", ["/tmp/[/b]x.log", "[b]bold", "[$warning]w", "[@click=app.quit]q[/]", "a\\[b]",
                                  "x\\", "[link=https://e.com]l[/link]", "[/]"])
def test_markup_shows_text_literally(text):
    assert Content.from_markup(markup(text)).plain == text
    assert Content.from_markup(f"[b]{escape_markup(text)}[/b]").plain.startswith(text.rstrip("\\"))


def test_log_lines_lose_c1_and_bidi_controls():
    parsed = LogParser().feed("[2025-10-22 10:27:57 TP0] Decode batch \u202eevil\x9b2J ok caf\u00e9")
    assert "\u202e" not in parsed.text and "\x9b" not in parsed.text
    assert parsed.text.endswith("evil ok caf\u00e9")


class TitleApp(App):
    def compose(self) -> ComposeResult:
        yield LogPane("/var/log/[/b]sglang[b]/server.log", host="h")


async def test_log_path_with_markup_in_the_title_does_not_crash():
    app = TitleApp()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        pane = app.query_one(LogPane)
        pane.reset("/x/[/]y[/b].log")
        await pilot.pause()
        assert Content.from_markup(pane.border_title).plain == "/x/[/]y[/b].log"


async def test_builder_version_field_with_markup_does_not_crash():
    from textual.widgets import Input

    from specdash.app.builder.pane import BuilderPane

    class BuilderApp(App):
        def compose(self) -> ComposeResult:
            yield BuilderPane()

    app = BuilderApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        field = app.query_one("#f-version", Input)
        field.value = "0.5[/b]x"
        await pilot.pause()
        pane = app.query_one(BuilderPane)
        # not a version: said in the status line (escaped), the newest rules stay in force
        assert "Launch builder — SGLang 0.5.23" in Content.from_markup(pane.border_title).plain
        assert "not an SGLang version: '0.5[/b]x'" in str(pane.query_one("#builder-status").render())


def test_markup_keeps_line_breaks_only_when_asked():
    text = "2 configurations:\n  baseline [b]x[/b]\x1b[31m\nAt the end"
    assert markup(text) == "2 configurations:   baseline \\[b]x\\[/b] At the end"
    kept = markup(text, newlines=True)
    assert kept == "2 configurations:\n  baseline \\[b]x\\[/b]\nAt the end"
    assert Content.from_markup(kept).plain.split("\n") == ["2 configurations:", "  baseline [b]x[/b]", "At the end"]
