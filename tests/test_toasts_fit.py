"""Long notices at 80x24 and 160x48: the toast shows whole words up to ``… (F1: whole text)`` (never a row cut off
at its bottom edge), and the help screen lists the notice whole. Read off the rendered screen."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from support.pilot import wait_until
from test_app_snapshots import _app, _at_the_end
from test_small_screens_fit import joined, screen_lines

from specdash.app.toasts import TOAST_ROWS, fit_toast, plain_text, toast_text_width

LONG = ("Low acceptance: check the draft/target pairing — hidden-state layers, tokenizer, chat template (F3 shows the "
        "pairing section once the launch command names both models; the draft model /models/EAGLE3-LLaMA3.1-8B was "
        "trained for a different target than /models/Llama-3.1-8B-Instruct, or the chat template differs from the "
        "one the draft saw in training). Accept length 1.09 of a possible 2 over 19 steady-state decode samples.")
MARK = " … (F1: whole text)"


def _rows(text: str, width: int) -> int:
    return len(Text(text).wrap(Console(width=width), width))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_a_long_notice_ends_on_screen_with_where_the_rest_is_and_help_has_it_whole(tmp_path, monkeypatch,
                                                                                          size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await _at_the_end(pilot)
        app.notify(LONG, title="Low acceptance", severity="warning", timeout=60)
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")), what="the toast")
        await pilot.pause()
        await wait_until(pilot, lambda: "(F1: whole text)" in joined(screen_lines(app, app.screen.query_one("Toast").region)),
                         what="the toast drawn", state=lambda: screen_lines(app, app.screen.query_one("Toast").region))
        toasts = list(app.screen.query("Toast"))
        assert len(toasts) == 1
        region = toasts[0].region
        assert region.right <= size[0] and region.bottom <= size[1]
        shown = " ".join(joined(screen_lines(app, region)).replace("▌", " ").split())  # without the left border
        # before (80x24): the toast stopped mid-sentence at its 6th row, the rest nowhere. At 80x24 the toast has
        # no title row (its two rows are text; this text starts with the title already)
        title = "" if size[1] < 36 else "Low acceptance "
        assert shown.startswith(f"{title}Low acceptance: check the draft/target pairing"), shown
        assert shown.endswith(MARK), shown
        kept = shown.removeprefix(title).removesuffix(MARK)
        assert " ".join(LONG.split()).startswith(kept), kept
        app.clear_notifications()
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen",
                         state=lambda: type(app.screen).__name__)
        body = str(app.screen.query_one("#help-body").render())
        assert "Recent notices" in body
        assert f"Low acceptance: {LONG}" in " ".join(body.split()), body[:600]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_a_short_notice_is_shown_whole_without_a_pointer(tmp_path, monkeypatch, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await _at_the_end(pilot)
        app.notify("Screenshot saved: /tmp/state/screenshots/specdash-1.svg", title="Screenshot", timeout=60)
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")), what="the toast")
        await pilot.pause()
        await wait_until(pilot, lambda: "specdash-1.svg" in joined(screen_lines(app, app.screen.query_one("Toast").region)),
                         what="the toast drawn", state=lambda: screen_lines(app, app.screen.query_one("Toast").region))
        shown = joined(screen_lines(app, app.screen.query_one("Toast").region))
        assert "Screenshot saved: /tmp/state/screenshots/specdash-1.svg" in shown
        assert "whole text" not in shown


def test_a_short_screen_toast_is_two_rows_across_the_width_with_its_title_folded_in():
    from specdash.app.toasts import SHORT_TOAST_ROWS, fold_title

    cut = fit_toast(fold_title(LONG, "Pairing"), "", 80, MARK, short=True)
    assert cut is not None and cut.startswith("Pairing: Low acceptance: check") and cut.endswith(MARK)
    assert _rows(cut, toast_text_width(80, True, short=True)) <= SHORT_TOAST_ROWS == 2
    assert toast_text_width(80, True, short=True) == 77  # the whole width less the toast's frame
    assert fold_title("Screenshot saved: /x.svg", "Screenshot") == "Screenshot saved: /x.svg"


def test_fit_toast_keeps_whole_words_and_fits_the_rows():
    assert fit_toast("short notice", "Title", 80, MARK) is None
    cut = fit_toast(LONG, "Low acceptance", 80, MARK)
    assert cut is not None and cut.endswith(MARK)
    assert LONG.startswith(cut.removesuffix(MARK))
    assert _rows(cut, toast_text_width(80, True)) <= TOAST_ROWS[True] - 1
    assert fit_toast(LONG, "", 160, MARK, small=False) is not None  # a big screen's toast has 5 rows too


def test_plain_text_drops_markup_and_keeps_text_that_is_not_markup():
    assert plain_text("[b]bold[/b] /x[", True) == "bold /x["
    assert plain_text("[/b] stray close", True) == "[/b] stray close"
    assert plain_text("[b]as typed[/b]", False) == "[b]as typed[/b]"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=600), st.text(max_size=40), st.integers(min_value=0, max_value=400), st.booleans(),
       st.booleans())
def test_fit_toast_never_raises_and_its_cut_fits(text, title, width, small, short):
    from specdash.app.toasts import SHORT_TOAST_ROWS

    cut = fit_toast(text, title, width, MARK, small=small, short=short)
    if cut is not None:
        rows = SHORT_TOAST_ROWS if short else TOAST_ROWS[small]
        assert cut.endswith(MARK) or (cut.endswith(" …") and width < 40)  # the pointer only where it fits
        assert _rows(cut, toast_text_width(width, small or short, short)) <= max(1, rows - (1 if title else 0))
