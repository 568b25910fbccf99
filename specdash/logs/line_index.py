"""A bounded line index: the byte offset of every N-th line of a file, as lnav and toolong keep one, so that any
line can be read back from the host on demand without holding the file in memory.

:class:`LineIndex` keeps at most :data:`MAX_ENTRIES` offsets. Entry ``i`` is the offset of line ``1 + i * step``
(1-based line numbers). When the file has more lines than ``MAX_ENTRIES * step``, the step doubles and every other
entry is dropped, so memory stays bounded whatever the file's size (a 10 000 000-line log: 4 096 entries, one every
4 096 lines; reading line N back means reading at most ``step`` lines from the nearest entry).

Pure data, no I/O.
"""

from __future__ import annotations

import re

#: Most offsets kept (8 bytes each in a list of ints: about 150 KB with the list's own pointers).
MAX_ENTRIES = 4096
#: Lines between two entries at the start (doubles as the file grows).
START_STEP = 256


class LineIndex:
    """Offsets of every :attr:`step`-th line, fed in file order with :meth:`add`."""

    def __init__(self, step: int = START_STEP, max_entries: int = MAX_ENTRIES) -> None:
        if step < 1 or max_entries < 2:
            raise ValueError("step must be >= 1 and max_entries >= 2")
        self.step = step
        self.max_entries = max_entries
        self.entries: list[int] = []
        #: lines seen so far (the 1-based number of the last line added)
        self.lines = 0

    def add(self, offsets: list[int]) -> None:
        """Lines ``lines + 1 ...`` of the file start at these byte ``offsets`` (a batch, in file order)."""
        first = self.lines + 1  # line number of offsets[0]
        skip = (-(first - 1)) % self.step  # offsets[skip] is the next line numbered 1 + i * step
        self.entries.extend(offsets[skip::self.step])
        self.lines += len(offsets)
        while len(self.entries) > self.max_entries:
            self.entries = self.entries[::2]
            self.step *= 2

    def add_block(self, block: bytes, offset: int) -> None:
        """Lines ``lines + 1 ...`` of the file are the lines of ``block`` (bytes starting at byte ``offset`` of the
        file, at a line start; a last line without newline counts as a line): the same as :meth:`add` with every
        line's offset, without listing them (newlines are counted in C, ``step`` lines per regex match)."""
        if not block:
            return
        count = block.count(b"\n") + (not block.endswith(b"\n"))
        skip = (-self.lines) % self.step  # the block's line ``skip`` (0-based) is the next one to index
        if skip < count:
            pos = _skip_lines(skip).match(block).end() if skip else 0  # type: ignore[union-attr]
            entries = self.entries
            entries.append(offset + pos)
            jump = _skip_lines(self.step)
            for _ in range((count - 1 - skip) // self.step):
                pos = jump.match(block, pos).end()  # type: ignore[union-attr]
                entries.append(offset + pos)
        self.lines += count
        while len(self.entries) > self.max_entries:
            self.entries = self.entries[::2]
            self.step *= 2

    def locate(self, line: int) -> tuple[int, int] | None:
        """``(line_number, offset)`` of the indexed line at or before 1-based ``line``: read forward from there
        (``line - line_number`` lines) to reach it. None when ``line`` is below 1 or past the lines indexed."""
        if line < 1 or line > self.lines or not self.entries:
            return None
        i = min((line - 1) // self.step, len(self.entries) - 1)
        return 1 + i * self.step, self.entries[i]


_SKIPS: dict[int, re.Pattern[bytes]] = {}


def _skip_lines(n: int) -> re.Pattern[bytes]:
    """A pattern whose match at a line start ends ``n`` lines further (after ``n`` newlines)."""
    pattern = _SKIPS.get(n)
    if pattern is None:
        pattern = _SKIPS[n] = re.compile(rb"(?:[^\n]*\n){%d}" % n)
    return pattern
