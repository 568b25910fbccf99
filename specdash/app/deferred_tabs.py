"""The tabs built after the first frame: the launch builder and the benchmarks.

Importing and composing them costs about as much as the rest of start-up together (httpx, textual-plotext, the
validator, the pairing checks, ~100 widgets), so their tabs are created empty and their panes are imported and
mounted right after the first frame and the first log lines, or earlier, the moment anything asks for them
(:meth:`DeferredTabs.deferred_pane`). A mixin for :class:`specdash.app.main.SpecdashApp`; what it needs from the
app is :class:`DeferredTabsApp`.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any, Protocol

from textual.css.query import NoMatches
from textual.widget import MountError
from textual.widgets import TabbedContent

#: Tabs hidden on the first frame: (tab id, tab label, pane module, pane class).
DEFERRED_TABS: tuple[tuple[str, str, str, str], ...] = (
    ("builder", "Launch builder", "specdash.app.builder.pane", "BuilderPane"),
    ("bench", "Benchmarks", "specdash.app.bench.pane", "BenchPane"),
)
#: Unless something asks for them sooner, the hidden tabs are built once the followed log's first lines are on
#: screen, or this many seconds after mount, whichever comes first: the log comes before panes nobody sees yet.
DEFERRED_BUILD_AFTER_S = 1.0
#: "On screen": this long after the first batch is fed to the log pane, which paints lines on a timer (1/30 s) and
#: its findings/metrics panels every 0.25 s (specdash.app.log.view.SYNC_INTERVAL_S, .pane.PANEL_REFRESH_S).
LOG_PAINTED_AFTER_S = 0.3


def deferred_class(tab_id: str) -> Any:
    """The pane class of deferred tab ``tab_id`` (imported on first use). Raises KeyError for another tab."""
    row = next(row for row in DEFERRED_TABS if row[0] == tab_id)
    return getattr(importlib.import_module(row[2]), row[3])


class DeferredTabsApp(Protocol):
    """What :class:`DeferredTabs` needs from the app it is mixed into (besides Textual's ``App``)."""

    readonly: bool
    is_running: bool

    def _wire_deferred_panes(self) -> None:
        """Hand the panes built so far what they need from the session (called after each build)."""

    def call_after_refresh(self, callback: Any, *args: Any) -> bool: ...

    def query_one(self, selector: Any) -> Any: ...

    def run_worker(self, work: Any, **kwargs: Any) -> Any: ...

    def exit(self, result: Any = None) -> None: ...


class DeferredTabs:
    """Mixin: builds the :data:`DEFERRED_TABS` panes into their (empty) tabs. Call :meth:`init_deferred_tabs` in
    ``__init__``, :meth:`start_deferred_build` when the first log lines are painted (or on a timer)."""

    def init_deferred_tabs(self) -> None:
        self._deferred_tabs = {row[0]: row for row in DEFERRED_TABS}
        self._deferred_panes: dict[str, Any] = {}  # tab id -> the pane, once created
        self._deferred_mounts: dict[str, Any] = {}  # tab id -> AwaitMount of the pane
        self._deferred_scheduled = asyncio.Event()  # set once every deferred pane has been created
        self._deferred_build_started = False

    @property
    def builder_pane(self: Any) -> Any:
        """The BuilderPane (built now if the first frame has not been drawn yet), or None before compose/at exit."""
        return self.deferred_pane("builder")

    @property
    def bench_pane(self: Any) -> Any:
        """The BenchPane (built now if the first frame has not been drawn yet), or None before compose/at exit."""
        return self.deferred_pane("bench")

    def deferred_pane(self: Any, tab_id: str) -> Any:
        """The pane of the deferred tab ``tab_id`` ("builder" or "bench"); if it is not built yet, every deferred
        pane is imported and mounted into its tab now (so each is in the DOM from then on). None when the layout
        is not composed yet or the app is shutting down. The pane exists at once and its public methods accept
        calls before it is mounted (BuilderPane and BenchPane keep the state and show it on mount); await
        :meth:`deferred_pane_mounted` before querying its children."""
        pane = self._deferred_panes.get(tab_id)
        if pane is not None or tab_id not in self._deferred_tabs or not self.is_running:
            return pane  # (nothing is built while the app shuts down)
        for each in self._deferred_tabs:  # in DEFERRED_TABS order: the builder before the bench pane
            self._build_deferred_pane(each)
        return self._deferred_panes.get(tab_id)

    def _build_deferred_pane(self: Any, tab_id: str) -> Any:
        """Import the pane of ``tab_id``, mount it into its tab and wire it; the pane, or None (see above)."""
        pane = self._deferred_panes.get(tab_id)
        if pane is not None or not self.is_running:
            return pane
        try:
            tab = self.query_one(TabbedContent).get_pane(tab_id)
        except NoMatches:  # not composed yet, or shutting down
            return None
        pane = deferred_class(tab_id)(readonly=self.readonly)
        try:
            self._deferred_mounts[tab_id] = tab.mount(pane)
        except MountError:  # the app is shutting down
            return None
        self._deferred_panes[tab_id] = pane
        self._wire_deferred_panes()
        return pane

    async def deferred_pane_mounted(self: Any, tab_id: str) -> Any:
        """The pane of ``tab_id`` (built now if need be, alone), once it and its children are mounted; or None."""
        pane = self._build_deferred_pane(tab_id)
        mounting = self._deferred_mounts.get(tab_id)
        if pane is not None and mounting is not None and not pane.is_mounted:
            await mounting
        return pane

    async def deferred_panes_ready(self: Any) -> None:
        """Wait until every deferred pane is built and mounted (by the build after the first frame, or earlier on
        demand). For code that must call methods of the builder or bench pane that query their children."""
        self.start_deferred_build()
        await self._deferred_scheduled.wait()
        for tab_id in self._deferred_tabs:
            await self.deferred_pane_mounted(tab_id)

    def start_deferred_build(self: Any) -> None:
        """Build the deferred panes after the next refresh, one per refresh (once; later calls do nothing)."""
        if not self._deferred_build_started:
            self._deferred_build_started = True
            self.call_after_refresh(self._build_deferred_panes)

    def _build_deferred_panes(self: Any) -> None:
        """After the first frame: build the hidden tabs' panes one per refresh, so the screen stays live."""
        for tab_id in self._deferred_tabs:
            if tab_id not in self._deferred_panes:
                if self._build_deferred_pane(tab_id) is not None:
                    self.call_after_refresh(self._build_deferred_panes)
                    return
        self._deferred_scheduled.set()

    def deferred_tab_activated(self: Any, event: TabbedContent.TabActivated) -> None:
        """For the app's ``TabbedContent.TabActivated`` handler: a hidden tab shown (key or mouse) before its pane
        was built is built now."""
        tab_id = getattr(event.pane, "id", None)
        if tab_id in self._deferred_tabs:
            self._build_deferred_pane(tab_id)

    async def deferred_mounts_settled(self: Any, timeout_s: float) -> None:
        """Return once no deferred pane is still being mounted (or after ``timeout_s``): closing the app under a
        pane that is composing refuses its children, and the pane's on_mount then fails with a traceback."""
        pending = [mounting for tab_id, mounting in self._deferred_mounts.items()
                   if not self._deferred_panes[tab_id].is_mounted]
        if not pending:
            return

        async def _mounted(mounting: Any) -> None:
            await mounting

        try:
            await asyncio.wait_for(asyncio.gather(*(_mounted(m) for m in pending)), timeout=timeout_s)
        except asyncio.TimeoutError:  # close anyway
            pass

    async def action_quit(self: Any) -> None:
        """``q``: quit — once a pane being mounted right after the first frame has finished (a fraction of a
        second; the app keeps running meanwhile). While a depth sweep runs it asks first (the answer quits)."""
        if self.ask_before_quitting():
            return
        self.remember_serving()
        if any(not pane.is_mounted for pane in self._deferred_panes.values()):
            self.run_worker(self._quit_when_mounted(), group="quit", exclusive=True)
            return
        self.exit()

    async def _quit_when_mounted(self: Any) -> None:
        await self.deferred_mounts_settled(timeout_s=5)
        self.exit()
