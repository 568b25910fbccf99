"""A DataTable whose rows never keep the column widths they were first drawn with.

Textual's DataTable (8.2) measures new rows when its message queue is idle, but caches each drawn line under a key
that leaves the column widths out: a row drawn between ``add_row`` and that idle pass (the app busy with a
benchmark's messages) kept the widths of the column labels for good, under a header drawn with the measured widths
(`short-ch  2752.1` under `Workload    out tok/s`, `2.84 (fres` for an accept length). This subclass drops the
drawn lines whenever the widths are measured again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.widgets import DataTable


class MeasuredDataTable(DataTable[Any]):
    """:class:`textual.widgets.DataTable` that redraws its rows after each width measurement (see module doc)."""

    def _update_dimensions(self, new_rows: Iterable[Any]) -> None:
        super()._update_dimensions(new_rows)
        self._clear_caches()  # the cached lines were drawn with the widths before this measurement
        self.refresh()
