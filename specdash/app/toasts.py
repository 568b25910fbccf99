"""Notices (toasts) that stay readable on a small terminal, and the list of recent ones the help screen shows.

A toast is at most :data:`TOAST_WIDTH` cells wide (:data:`TOAST_WIDTH_SHARE` of the screen) and :data:`TOAST_ROWS`
rows high (fewer on a small screen: below 120 columns or 36 rows). On a short screen (below 36 rows, e.g. 80x24)
one toast shows at a time, the newest, across the whole width in :data:`SHORT_TOAST_ROWS` rows with its title
folded into its first row, so the log keeps its lines; the older ones are in the help screen's recent notices.
The toasts take rows of their own above the key footer (app.tcss: the rack is docked in the default layer, so the
panes shrink while it shows): a notice never hides a pane's status line, the replay bar or the footer. A longer
notice is cut at a word, ending ``… (F1: whole text)``, and the whole text is in the help screen's "Recent
notices" (:class:`NoticeLog`). The sizes here are the ones app.tcss gives the toast (``Toast``,
``Screen.-narrow Toast``, ``Screen.-short Toast``).
"""

from __future__ import annotations

import collections
import dataclasses
import time

from rich.console import Console
from rich.errors import MarkupError
from rich.text import Text

#: a toast is at most this many cells wide (Textual's own toast width) ...
TOAST_WIDTH = 60
#: ... and this share of the screen's width (app.tcss: ``max-width: 75%`` on a small screen, else 50%)
TOAST_WIDTH_SHARE = {True: 0.75, False: 0.5}
#: rows of text in a toast, title included (app.tcss: ``max-height: 6`` and no vertical padding on a small screen;
#: else ``max-height: 7`` less Textual's padding of 1 above and below)
TOAST_ROWS = {True: 6, False: 5}
#: rows of text in the one toast a short screen (below 36 rows) shows, across the whole width: the log pane of an
#: 80x24 console keeps 9 of its 11 lines (app.tcss: ``Screen.-short Toast`` ``max-height: 2``, ``width: 100%``)
SHORT_TOAST_ROWS = 2
#: cells a toast takes beside its text: the coloured left border (1) and the padding (1 each side)
TOAST_FRAME = 3
#: how many notices the help screen keeps
KEPT = 20


@dataclasses.dataclass(frozen=True)
class Notice:
    """One notice as raised: ``text`` (plain, markup removed), ``title``, ``severity`` (Textual's name),
    ``at`` (local wall-clock time, ``HH:MM:SS``)."""

    text: str
    title: str
    severity: str
    at: str


class NoticeLog:
    """The last :data:`KEPT` notices, newest first (:attr:`notices`)."""

    def __init__(self) -> None:
        self.notices: collections.deque[Notice] = collections.deque(maxlen=KEPT)

    def add(self, text: str, title: str, severity: str) -> Notice:
        notice = Notice(text, title, str(severity), time.strftime("%H:%M:%S"))
        self.notices.appendleft(notice)
        return notice


def plain_text(message: str, markup: bool) -> str:
    """The words a toast shows for ``message``: Rich markup removed when ``markup`` (text that is not valid markup
    is shown as given, as Textual would fail to parse it otherwise)."""
    if not markup:
        return message
    try:
        return Text.from_markup(message).plain
    except MarkupError:
        return message


def toast_text_width(screen_width: int, small: bool, short: bool = False) -> int:
    """Cells of text in a toast on a screen ``screen_width`` cells wide: the toast's width less its frame; >= 10.
    ``short`` (below 36 rows): the toast takes the whole width (app.tcss), its two rows hold more."""
    if short:
        return max(10, screen_width - TOAST_FRAME)
    return max(10, min(TOAST_WIDTH, int(screen_width * TOAST_WIDTH_SHARE[small])) - TOAST_FRAME)


def fit_toast(text: str, title: str, screen_width: int, more: str, small: bool = True,
              short: bool = False) -> str | None:
    """``text`` cut to the rows a toast has (a title takes one; ``small``: a screen below 120 columns or 36 rows;
    ``short``: below 36 rows, :data:`SHORT_TOAST_ROWS`), ending with ``more`` (e.g. ``" … (F1: whole text)"``; a
    bare ``" …"`` where the pointer itself does not fit) on its last row; None when the whole text fits. Wrapping
    is Rich's (as the toast wraps), so the cut text fits too."""
    small = small or short
    width = toast_text_width(screen_width, small, short)
    rows = max(1, (SHORT_TOAST_ROWS if short else TOAST_ROWS[small]) - (1 if title else 0))
    console = Console(width=width, color_system=None, legacy_windows=False)

    def lines(candidate: str) -> int:
        return len(Text(candidate).wrap(console, width))

    if lines(text) <= rows:
        return None
    if lines(more.strip()) > rows:  # a toast too small for the pointer (a few columns): a bare ellipsis ends it
        more = " …"
    words = text.split()
    lo, hi = 0, len(words)  # the most words that fit with the marker after them
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lines(" ".join(words[:mid]) + more) <= rows:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + more


def fold_title(text: str, title: str) -> str:
    """``text`` with ``title`` in front (``"Screenshot: saved …"``) for a toast without a title row; ``text`` alone
    when it already starts with the title's words."""
    if not title or text.startswith(title):
        return text
    return f"{title}: {text}"
