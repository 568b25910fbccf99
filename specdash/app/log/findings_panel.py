"""FindingsPanel: the pinned, deduplicated findings of the log (most severe first) and, below the list, the
explanation and fix of the highlighted one. Enter on a finding jumps to its line."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.style import Style
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from specdash.app.styles import load_tcss
from specdash.logs.findings import Finding

_MARK = {"error": ("E", "$error"), "warning": ("W", "$warning"), "success": ("✓", "$success"), "info": ("i", "$accent")}


def finding_prompt(finding: Finding) -> Content:
    """One list entry: severity mark, line, time, message and repeat count."""
    mark, var = _MARK.get(finding.severity, ("?", "$foreground"))
    when = finding.time.strftime("%H:%M:%S") if finding.time else ""
    count = f" ×{finding.count}" if finding.count > 1 else ""
    return Content.assemble(
        (f"{mark} ", f"bold {var}"),
        (f"L{finding.line} ", "$foreground-muted"),
        (f"{when} " if when else "", "$foreground-muted"),
        (finding.message, var if finding.severity in ("error", "warning") else ""),
        (count, "bold"),
    )


def finding_detail(finding: Finding) -> Content:
    """The explanation, flag and fix of a finding, and the public thread (``data["link"]``, a known SGLang issue)
    as a terminal hyperlink the user can also select and copy."""
    parts: list = [(finding.message, "bold"), "\n", finding.explanation or ""]
    link = finding.data.get("link") if finding.data else None
    if isinstance(link, str) and link:
        parts += ["\n", ("see: ", "bold $accent"), (link, Style(underline=True, link=link))]
    if finding.flag:
        parts += ["\n", ("flag: ", "bold $accent"), finding.flag]
    if finding.fix:
        parts += ["\n", ("fix: ", "bold $accent"), (finding.fix, "$accent")]
    if finding.count > 1:
        parts += ["\n", (f"seen {finding.count} times, last on line {finding.last_line}", "$foreground-muted")]
    return Content.assemble(*parts)


class FindingsList(OptionList):
    """The list part of :class:`FindingsPanel`."""


class FindingsPanel(Vertical):
    """List of :class:`Finding` plus the detail of the highlighted one; posts :class:`FindingsPanel.JumpTo` with the
    stream line number on Enter."""

    DEFAULT_CSS = load_tcss(__file__)

    class JumpTo(Message):
        """The user chose a finding: show its line."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "findings"
        self._shown: list[Finding] = []

    def compose(self) -> ComposeResult:
        yield FindingsList(id="findings-list")
        yield Static("", id="finding-detail")

    @property
    def option_count(self) -> int:
        """Findings listed."""
        return self.query_one(FindingsList).option_count

    @property
    def shown(self) -> list[Finding]:
        """The findings in list order."""
        return list(self._shown)

    def show(self, findings: list[Finding]) -> None:
        """Replace the list with ``findings`` (keeps the highlighted finding when it is still there)."""
        options = self.query_one(FindingsList)
        signature = [(f.key, f.count, f.message, f.severity) for f in findings]
        if signature == [(f.key, f.count, f.message, f.severity) for f in self._shown] and \
                len(self._shown) == options.option_count:
            return
        keep = None
        if options.highlighted is not None and options.highlighted < len(self._shown):
            keep = self._shown[options.highlighted].key
        self._shown = list(findings)
        options.clear_options()
        options.add_options([Option(finding_prompt(f), id=f"f{i}") for i, f in enumerate(findings)])
        if keep is not None:
            for i, f in enumerate(findings):
                if f.key == keep:
                    options.highlighted = i
                    break
        # the order is said: most severe first (a crash above a ready line), then by line
        self.border_title = f"findings ({len(findings)}, most severe first)" if len(findings) > 1 else \
            f"findings ({len(findings)})"
        self._show_detail(options.highlighted)

    def highlight(self, index: int) -> None:
        """Highlight the finding at ``index`` (and show its detail)."""
        self.query_one(FindingsList).highlighted = index

    def _show_detail(self, index: int | None) -> None:
        detail = self.query_one("#finding-detail", Static)
        if index is None or not 0 <= index < len(self._shown):
            detail.update("enter on a finding jumps to its line" if self._shown else "no findings yet")
            return
        detail.update(finding_detail(self._shown[index]))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_detail(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self._shown):
            self.post_message(self.JumpTo(self._shown[index].line))
