"""LogView: a line-based scroll view for tens of thousands of log lines per second.

Lines are stored as three parallel lists (stream line number, kind, text) and rendered one visible row at a time
(no Rich ``Text`` per line, no re-layout per write), so batched appends cost O(batch). Colours come from component
classes styled in ``view.tcss`` with theme variables.

Wrap (``Z`` in the log pane, :meth:`LogView.set_wrap`): a long line takes as many rows as it needs at the view's
width instead of scrolling sideways; shown line ``r`` starts at visual row ``_vstarts[r]`` (kept per append, rebuilt
on a filter, a resize or a drop).

Bounded memory: at most :data:`MAX_LINES` lines are kept; when the window is full the oldest
:data:`DROP_CHUNK` lines are dropped at once and a marker line at the top says how many were dropped (the full log
stays on the host; ``specdash scan`` reads all of it).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from math import ceil

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from specdash.app.styles import load_tcss
from specdash.logs.parser import LineKind, ParsedLine, severity_of

#: Lines kept in memory (each ~100-300 bytes with its text: ≈ 30-60 MB at the bound).
MAX_LINES = 100_000
#: Lines dropped at once when the window is full (amortises the list shifts).
DROP_CHUNK = 10_000

_KIND_CLASS: dict[LineKind, str] = {
    LineKind.marker: "log-view--marker",
    LineKind.decode: "log-view--decode",
    LineKind.prefill: "log-view--prefill",
    LineKind.weights_begin: "log-view--startup",
    LineKind.weights_end: "log-view--startup",
    LineKind.kv_cache: "log-view--startup",
    LineKind.graph_begin: "log-view--startup",
    LineKind.graph_progress: "log-view--startup",
    LineKind.graph_end: "log-view--startup",
    LineKind.server_args: "log-view--startup",
    LineKind.capacity: "log-view--startup",
    LineKind.timings: "log-view--startup",
    LineKind.traceback: "log-view--traceback",
}
_SEVERITY_CLASS = {"warning": "log-view--warning", "error": "log-view--error", "success": "log-view--success"}


def _class_of(kind: LineKind) -> str:
    sev = severity_of(kind)
    if kind is LineKind.traceback:
        return "log-view--traceback"
    if sev is not None:
        return _SEVERITY_CLASS[sev]
    return _KIND_CLASS.get(kind, "log-view--plain")


#: Appends update the scroll geometry at most this often (seconds): one layout per frame, however fast lines come.
SYNC_INTERVAL_S = 1 / 30
#: ... and at most this often while lines stream in faster than FAST_ROWS per frame: a firehose nobody can read
#: line by line is drawn 10 times a second, which leaves the CPU to the analyzer and to key presses.
SYNC_INTERVAL_FAST_S = 1 / 10
FAST_ROWS = 200

class FilterError(ValueError):
    """The filter text is an invalid regular expression (message is one line)."""


def compile_filter(text: str) -> re.Pattern[str] | None:
    """``""`` -> None (no filter); ``"!regex"`` -> that regex (case-insensitive); anything else -> the plain text
    (case-insensitive). Raises :class:`FilterError` for a bad regex."""
    if not text:
        return None
    if text.startswith("!"):
        body = text[1:]
        if not body:
            return None
        try:
            return re.compile(body, re.IGNORECASE)
        except re.error as exc:
            raise FilterError(f"bad regex: {exc}") from None
    return re.compile(re.escape(text), re.IGNORECASE)


class LogView(ScrollView, can_focus=True):
    """The scrolling log text. Use :meth:`append`, :meth:`append_marker`, :meth:`clear`, :meth:`set_filter`,
    :meth:`jump` and :attr:`follow`."""

    DEFAULT_CSS = load_tcss(__file__)
    COMPONENT_CLASSES = {
        "log-view--plain", "log-view--warning", "log-view--error", "log-view--success", "log-view--marker",
        "log-view--decode", "log-view--prefill", "log-view--startup", "log-view--traceback", "log-view--cursor",
        "log-view--hit",
    }

    class FollowChanged(Message):
        """Follow mode or the count of unseen lines changed."""

        def __init__(self, follow: bool, new_lines: int) -> None:
            super().__init__()
            self.follow = follow
            self.new_lines = new_lines

    class NeedEarlier(Message):
        """The user scrolled to the top of the window while earlier lines exist in the file: read some back and
        :meth:`LogView.prepend` them."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._numbers: list[int] = []
        self._kinds: list[LineKind] = []
        self._texts: list[str] = []
        self._base = 0  # absolute index of _texts[0]
        self._dropped = 0
        self._view: list[int] | None = None  # absolute indices matching the filter (None: all lines)
        self._pattern: re.Pattern[str] | None = None
        self._width = 0
        self.follow = True
        self.new_lines = 0
        self.cursor: int | None = None  # absolute index of the highlighted line
        self._styles: dict[str, Style] = {}
        self.received = 0
        self._sync_pending = False  # a size/scroll update is scheduled (appends coalesce into one per frame)
        self._sync_interval = SYNC_INTERVAL_S
        self._rows_since_sync = 0
        #: called after each geometry sync (the pane redraws its panels then, in the same frame)
        self.after_sync: Callable[[], None] | None = None
        #: the file holds lines above the first one shown (tail-first): reaching the top asks for them
        self.earlier_exists = False
        self.wrap = False
        self._vstarts: list[int] = []  # wrap: visual row where each shown row starts
        self._vtotal = 0  # wrap: visual rows in all
        self._wrap_width = 0  # wrap: the width _vstarts was computed for

    # ---- data ---------------------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        """Lines in the window (markers included)."""
        return len(self._texts)

    @property
    def row_count(self) -> int:
        """Rows shown (the filtered view, or every line)."""
        return len(self._view) if self._view is not None else len(self._texts)

    @property
    def dropped(self) -> int:
        """Lines dropped from the front of the window so far."""
        return self._dropped

    @property
    def filter_hits(self) -> int | None:
        """Lines matching the filter (None when no filter is set)."""
        return None if self._view is None else len(self._view)

    def text_at_row(self, row: int) -> str:
        """Text of a shown row (for tests and copy)."""
        return self._texts[self._abs_of_row(row) - self._base]

    def kind_at_row(self, row: int) -> LineKind:
        """Kind of a shown row."""
        return self._kinds[self._abs_of_row(row) - self._base]

    def _abs_of_row(self, row: int) -> int:
        return self._view[row] if self._view is not None else self._base + row

    def cursor_row(self) -> int | None:
        """The shown row of the highlighted line (None when no line is highlighted or it is filtered out)."""
        return None if self.cursor is None else self._row_of_abs(self.cursor)

    def _row_of_abs(self, index: int) -> int | None:
        if self._view is None:
            row = index - self._base
            return row if 0 <= row < len(self._texts) else None
        pos = bisect.bisect_left(self._view, index)
        return pos if pos < len(self._view) and self._view[pos] == index else None

    # ---- wrap ---------------------------------------------------------------------------------------------------
    def set_wrap(self, wrap: bool) -> None:
        """Wrap long lines at the view's width (True) or scroll sideways (False); the line at the top stays there."""
        self.sync_now()
        top = self._row_at_visual(int(self.scroll_y))
        self.wrap = wrap
        self._rebuild_wrap()
        self._apply_geometry()
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        else:
            self.scroll_to(x=0, y=self._visual_of_row(top), animate=False, immediate=True)
        self.refresh()

    def _rows_for(self, text: str, width: int) -> int:
        cells = len(text) if text.isascii() else cell_len(text)
        return max(1, ceil(cells / width))

    def _rebuild_wrap(self) -> None:
        self._vstarts = []
        self._vtotal = 0
        if not self.wrap:
            return
        self._wrap_width = max(1, self.scrollable_content_region.width or self.size.width or 80)
        self._extend_wrap(0)

    def _extend_wrap(self, first_row: int) -> None:
        """Visual starts for shown rows from ``first_row`` on (appended rows)."""
        width, texts, base, view = max(1, self._wrap_width), self._texts, self._base, self._view
        starts, total = self._vstarts, self._vtotal
        for row in range(first_row, self.row_count):
            starts.append(total)
            total += self._rows_for(texts[(view[row] if view is not None else base + row) - base], width)
        self._vtotal = total

    def _visual_rows(self) -> int:
        return self._vtotal if self.wrap else self.row_count

    def _row_at_visual(self, visual: int) -> int:
        """The shown row on visual row ``visual`` (the same number without wrap)."""
        if not self.wrap or not self._vstarts:
            return visual
        return max(0, bisect.bisect_right(self._vstarts, visual) - 1)

    def _visual_of_row(self, row: int) -> int:
        if not self.wrap or not self._vstarts:
            return row
        return self._vstarts[min(max(row, 0), len(self._vstarts) - 1)]

    def _apply_geometry(self) -> None:
        """The scroll area: the widest line by the rows (no wrap), or the view's width by the visual rows."""
        if self.wrap:
            self.virtual_size = Size(self._wrap_width, self._vtotal)
        else:
            self.virtual_size = Size(self._width + 1, self.row_count)

    def append(self, lines: Iterable[ParsedLine]) -> None:
        """Add parsed lines at the bottom (one batch)."""
        numbers, kinds, texts = self._numbers, self._kinds, self._texts
        start_abs = self._base + len(texts)
        added = 0
        pattern = self._pattern
        matched: list[int] = []
        width = self._width
        for line in lines:
            numbers.append(line.number)
            kinds.append(line.kind)
            text = line.text
            texts.append(text)
            if len(text) > width:
                width = len(text)
            if pattern is not None and pattern.search(text) is not None:
                matched.append(start_abs + added)
            added += 1
        if not added:
            return
        self.received += added
        self._width = width
        if self._view is not None:
            self._view.extend(matched)
        self._after_append(added if self._view is None else len(matched))

    def prepend(self, lines: list[ParsedLine]) -> int:
        """Add lines read back from the file above the first line shown (scrolling back into history); the rows
        on screen stay where they are. Returns the lines added: 0 once lines were dropped from the front (the
        window is full) or when the window would outgrow :data:`MAX_LINES`."""
        if not lines or self._dropped or len(self._texts) + len(lines) > MAX_LINES:
            return 0
        self.sync_now()
        count = len(lines)
        self._numbers[0:0] = [line.number for line in lines]
        self._kinds[0:0] = [line.kind for line in lines]
        texts = [line.text for line in lines]
        self._texts[0:0] = texts
        self._base -= count  # absolute indices of the lines already here (cursor, filter view) do not change
        self._width = max(self._width, max(len(t) for t in texts))
        added = count
        if self._view is not None:
            search = self._pattern.search if self._pattern is not None else None
            matched = [self._base + i for i, line in enumerate(lines)
                       if search is None or line.kind is LineKind.marker or search(line.text) is not None]
            self._view[0:0] = matched
            added = len(matched)
        shift = added
        if self.wrap:  # the visual rows of every shown row move down by the wrapped height of the new ones
            before = self._vtotal
            self._rebuild_wrap()
            shift = self._vtotal - before
        self._apply_geometry()
        if shift:
            self.scroll_to(y=self.scroll_y + shift, animate=False, immediate=True)
        self.refresh()
        return count

    def shift_numbers(self, by: int) -> None:
        """Add ``by`` to every stream line number (the lines above the first one shown have been counted)."""
        if by:
            self._numbers = [n + by for n in self._numbers]

    @property
    def first_number(self) -> int | None:
        """Stream line number of the first line in the window (None when empty)."""
        return self._numbers[0] if self._numbers else None

    def append_marker(self, text: str) -> None:
        """Add a visually distinct marker line (never filtered out)."""
        index = self._base + len(self._texts)
        self._numbers.append(self._numbers[-1] if self._numbers else 0)
        self._kinds.append(LineKind.marker)
        self._texts.append(text)
        if self._view is not None:
            self._view.append(index)
        self._after_append(1)

    def _after_append(self, shown: int) -> None:
        if len(self._texts) > MAX_LINES:
            self._drop_front()
        if not self.follow and shown:
            self.new_lines += shown
        # Resizing the virtual area re-lays out the screen: do it once per SYNC_INTERVAL_S, not per batch, so a
        # fast stream costs one layout per frame instead of one per batch.
        self._rows_since_sync += shown
        if not self._sync_pending:
            self._sync_pending = True
            self.set_timer(self._sync_interval, self.sync_now)

    def sync_now(self) -> None:
        """Apply pending appends to the scroll geometry now (size, follow position, new-lines badge)."""
        if not self._sync_pending:
            return
        self._sync_pending = False
        self._sync_interval = SYNC_INTERVAL_FAST_S if self._rows_since_sync > FAST_ROWS else SYNC_INTERVAL_S
        self._rows_since_sync = 0
        if self.wrap:
            if len(self._vstarts) > self.row_count:
                self._rebuild_wrap()
            else:
                self._extend_wrap(len(self._vstarts))
        self._apply_geometry()
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        elif self.new_lines:
            self.post_message(self.FollowChanged(self.follow, self.new_lines))
        self.refresh()
        if self.after_sync is not None:
            self.after_sync()

    def _drop_front(self) -> None:
        excess = len(self._texts) - MAX_LINES + DROP_CHUNK
        # keep an existing drop marker at position 0 out of the count
        has_marker = self._kinds and self._kinds[0] is LineKind.marker and self._texts[0].startswith("── ")\
            and "earlier lines dropped" in self._texts[0]
        start = 1 if has_marker else 0
        del self._numbers[start:start + excess]
        del self._kinds[start:start + excess]
        del self._texts[start:start + excess]
        self._dropped += excess
        marker = (f"── {self._dropped:,} earlier lines dropped (window: {MAX_LINES:,} lines); "
                  "run `specdash scan` on the file for all of it ──")
        if has_marker:
            self._texts[0] = marker
        else:
            self._numbers.insert(0, self._numbers[0] if self._numbers else 0)
            self._kinds.insert(0, LineKind.marker)
            self._texts.insert(0, marker)
            excess -= 1  # the marker took one slot
        self._base += excess
        if self._view is not None:
            # re-base: the marker sits at absolute index self._base
            cut = bisect.bisect_left(self._view, self._base + 1)
            self._view = [self._base] + self._view[cut:]
        if self.cursor is not None and self.cursor < self._base:
            self.cursor = None
        if self.wrap:
            self._rebuild_wrap()

    def clear(self) -> None:
        """Forget every line (new file)."""
        self._sync_pending = False
        self._numbers.clear()
        self._kinds.clear()
        self._texts.clear()
        self._base = 0
        self._dropped = 0
        self._width = 0
        self.cursor = None
        self.new_lines = 0
        self.received = 0
        self._view = [] if self._pattern is not None else None
        self._vstarts, self._vtotal = [], 0
        self.virtual_size = Size(0, 0)
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._set_follow(True)
        self.refresh()

    # ---- follow / scrolling -----------------------------------------------------------------------------------
    def on_resize(self, event) -> None:
        if self.wrap and self.scrollable_content_region.width != self._wrap_width:
            top = self._row_at_visual(int(self.scroll_y))
            self._rebuild_wrap()
            self._apply_geometry()
            if not self.follow:
                self.scroll_to(y=self._visual_of_row(top), animate=False, immediate=True)
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def _scroll_update(self, virtual_size) -> None:
        """Textual recomputes the scroll area (a scrollbar appearing, the view or its content resized): while
        following, the last line stays at the bottom whichever layout pass changed the area (a resize event is not
        sent when only a horizontal scrollbar appears and takes a row)."""
        super()._scroll_update(virtual_size)
        if self.follow and self.cursor is None and self.scroll_y < self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def _set_follow(self, follow: bool) -> None:
        self.follow = follow
        if follow:
            self.new_lines = 0
        self.post_message(self.FollowChanged(self.follow, self.new_lines))

    def set_follow(self, follow: bool) -> None:
        """Turn follow mode on (scroll to the end, reset the new-lines count) or off."""
        self.sync_now()
        self._set_follow(follow)
        if follow:
            self.cursor = None
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            self.refresh()

    def _stop_following(self) -> None:
        if self.follow:
            self._set_follow(False)

    def action_scroll_up(self) -> None:
        self._stop_following()
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self._stop_following()
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self._stop_following()
        super().action_scroll_home()
        self._ask_earlier()

    def _ask_earlier(self) -> None:
        if self.earlier_exists and not self._dropped and self.scroll_y <= 0:
            self.post_message(self.NeedEarlier())

    def action_scroll_end(self) -> None:
        self.set_follow(True)

    def _on_mouse_scroll_up(self, event) -> None:
        self._stop_following()
        super()._on_mouse_scroll_up(event)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value <= 0:
            self._ask_earlier()
        if not self.follow and self.cursor is None and new_value > old_value and self.max_scroll_y > 0 \
                and new_value >= self.max_scroll_y - 0.5:
            # the user scrolled back to the bottom: follow again
            self._set_follow(True)

    # ---- filter and jumps --------------------------------------------------------------------------------------
    def set_filter(self, text: str) -> int | None:
        """Show only lines matching ``text`` (see :func:`compile_filter`); returns the hit count (None when the
        filter is empty). Raises :class:`FilterError` for a bad regex (the previous filter stays)."""
        pattern = compile_filter(text)
        self.sync_now()
        self._pattern = pattern
        if pattern is None:
            self._view = None
        else:
            search = pattern.search
            base = self._base
            self._view = [base + i for i, (t, k) in enumerate(zip(self._texts, self._kinds, strict=False))
                          if k is LineKind.marker or search(t) is not None]
        self._rebuild_wrap()
        self._apply_geometry()
        if self.cursor is not None and self._row_of_abs(self.cursor) is None:
            self.cursor = None
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        elif self.cursor is not None:
            self._scroll_to_row(self._row_of_abs(self.cursor) or 0)
        self.refresh()
        return self.filter_hits

    def _scroll_to_row(self, row: int) -> None:
        self.sync_now()
        height = max(1, self.scrollable_content_region.height)
        target = max(0, self._visual_of_row(row) - height // 2)
        self.scroll_to(y=target, animate=False, immediate=True)

    def _current_row(self) -> int:
        if self.cursor is not None:
            row = self._row_of_abs(self.cursor)
            if row is not None:
                return row
        # no cursor: start from the top visible row (forward) / bottom visible row (backward)
        return self._row_at_visual(int(self.scroll_y)) - 1

    def jump(self, direction: int, severity: str | None = None) -> bool:
        """Move the cursor to the next (``direction`` = 1) or previous (-1) shown row whose severity is
        ``severity`` (``"warning"``/``"error"``; None: any row, i.e. the next filter hit). Stops following.
        Returns False when there is none."""
        self.sync_now()
        rows = self.row_count
        if not rows:
            return False
        row = self._current_row()
        if self.cursor is None and direction < 0:
            row = min(rows, self._row_at_visual(int(self.scroll_y) + max(1, self.scrollable_content_region.height)))
        step = 1 if direction > 0 else -1
        r = row + step
        kinds, base = self._kinds, self._base
        view = self._view
        while 0 <= r < rows:
            kind = kinds[(view[r] if view is not None else base + r) - base]
            if kind is not LineKind.marker and (severity is None or _matches_severity(kind, severity)):
                self.cursor = view[r] if view is not None else base + r
                if self.follow:
                    self._set_follow(False)
                self._scroll_to_row(r)
                self.refresh()
                return True
            r += step
        return False

    def jump_to_number(self, number: int) -> bool:
        """Put the cursor on stream line ``number`` (clearing a filter that hides it); False when the line is no
        longer in the window."""
        self.sync_now()
        numbers = self._numbers
        pos = bisect.bisect_left(numbers, number)
        while pos < len(numbers) and self._kinds[pos] is LineKind.marker:
            pos += 1
        if pos >= len(numbers) or numbers[pos] != number:
            return False
        index = self._base + pos
        if self._row_of_abs(index) is None:
            self._pattern = None
            self._view = None
            self._rebuild_wrap()
            self._apply_geometry()
        self.cursor = index
        if self.follow:
            self._set_follow(False)
        self._scroll_to_row(self._row_of_abs(index) or 0)
        self.refresh()
        return True

    @property
    def cursor_number(self) -> int | None:
        """Stream line number under the cursor (None when no cursor)."""
        if self.cursor is None:
            return None
        return self._numbers[self.cursor - self._base]

    # ---- rendering ------------------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        row = scroll_y + y
        base_style = self.rich_style
        if self.wrap:  # a part of a long line: its cells from part * width on
            if row >= self._vtotal or not self._vstarts:
                return Strip.blank(width, base_style)
            visual = row
            row = self._row_at_visual(visual)
            width = max(1, self._wrap_width)  # the scrollbar's columns are not the text's
            scroll_x = (visual - self._vstarts[row]) * width
            if row >= self.row_count:
                return Strip.blank(width, base_style)
        elif row >= self.row_count:
            return Strip.blank(width, base_style)
        index = self._abs_of_row(row)
        pos = index - self._base
        text = self._texts[pos]
        style = base_style + self._style(_class_of(self._kinds[pos]))
        if index == self.cursor:
            style = style + self._style("log-view--cursor")
        segments: list[Segment]
        pattern = self._pattern
        if pattern is not None and self._kinds[pos] is not LineKind.marker:
            segments = []
            last = 0
            hit = style + self._style("log-view--hit")
            for m in pattern.finditer(text, 0, scroll_x + width + 200):
                if m.end() == m.start():
                    continue
                segments.append(Segment(text[last:m.start()], style))
                segments.append(Segment(text[m.start():m.end()], hit))
                last = m.end()
            segments.append(Segment(text[last:], style))
        else:
            if text.isascii() and text.isprintable():
                # one cell per character (most log lines): slice and pad instead of measuring and cropping
                piece = text[scroll_x:scroll_x + width]
                fill = style if index == self.cursor else base_style
                if len(piece) < width:
                    return Strip([Segment(piece, style), Segment(" " * (width - len(piece)), fill)],
                                 width).apply_offsets(scroll_x, row)
                return Strip([Segment(piece, style)], width).apply_offsets(scroll_x, row)
            segments = [Segment(text, style)]
        strip = Strip(segments)
        fill = style if index == self.cursor else base_style
        return strip.crop_extend(scroll_x, scroll_x + width, fill).apply_offsets(scroll_x, row)


def _matches_severity(kind: LineKind, severity: str) -> bool:
    if kind is LineKind.traceback and severity == "error":
        return False  # jump to the traceback's exception line / header only, not every frame
    return severity_of(kind) == severity
