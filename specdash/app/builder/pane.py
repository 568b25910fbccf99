"""BuilderPane: the launch command, form fields for the speculative settings, live diagnostics and the
effective configuration next to what was typed.

Every keystroke re-validates with :func:`specdash.sglang.validate.validate_command` (pure, ~0.5 ms) and posts
:class:`BuilderPane.CommandChanged`. Keys: ``ctrl+f`` applies the selected diagnostic's fix, ``ctrl+o`` copies the
command (OSC 52, wrapped for tmux, and written to ``user_state_dir("specdash")/launch-command.sh``), ``ctrl+r``
runs SGLang's own argument resolution on the host (needs ``pane.host``; see :mod:`specdash.sglang.dry_run`).
When the app sets ``pane.host``, the SGLang version is detected there unless the user typed one in the version field.
The pane does no host I/O itself: versions and config.json files come from
:func:`specdash.sglang.host_facts.facts_for` (read once per connection), the dry run from
:func:`specdash.sglang.dry_run.run_dry_run`, the pairing from :class:`specdash.sglang.pairing.PairingService`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Select, Static, TextArea

from specdash.app.builder.clipboard import osc52_sequence, write_command_file
from specdash.app.keymap import key_for
from specdash.app.pairing import PairingView
from specdash.app.styles import load_tcss
from specdash.sglang.diagnostics import Edit, Fix
from specdash.sglang.dry_run import compare, run_dry_run
from specdash.sglang.host_facts import facts_for
from specdash.sglang.validate import ValidationReport, validate_command
from specdash.sglang.versions import CURRENT_RELEASE
from specdash.text.display import markup

if TYPE_CHECKING:
    from specdash.hosts.base import Host
    from specdash.sglang.dry_run import DryRunResult
    from specdash.sglang.pairing import PairingReport, PairingService

#: (form field id, ServerArgs field, label). The algorithm is a Select; the rest are Inputs.
FORM_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("f-algorithm", "speculative_algorithm", "algorithm"),
    ("f-draft", "speculative_draft_model_path", "draft model"),
    ("f-steps", "speculative_num_steps", "num_steps"),
    ("f-topk", "speculative_eagle_topk", "eagle_topk"),
    ("f-draft-tokens", "speculative_num_draft_tokens", "draft_tokens"),
    ("f-tp", "tp_size", "tp size"),
    ("f-mem", "mem_fraction_static", "mem fraction"),
    ("f-port", "port", "port"),
)
ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")
_SEVERITY_STYLE = {"error": "bold $error", "override": "bold $warning", "warning": "$warning", "info": "$accent"}
_SEVERITY_TEXT = {"error": "ERROR", "override": "OVERRIDE", "warning": "WARN", "info": "info"}
#: typed -> effective table: the field column's width, and the least the typed / effective columns get
EFFECTIVE_FIELD_WIDTH, EFFECTIVE_TYPED_MIN, EFFECTIVE_VALUE_MIN = 20, 9, 11
_EFFECTIVE_ROWS = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                   "speculative_num_draft_tokens", "max_running_requests", "disable_overlap_schedule",
                   "enable_mixed_chunk", "page_size", "attention_backend", "speculative_draft_model_path")


class BuilderPane(Widget):
    """The launch-builder pane.

    ``command`` (str, the text in the editor), ``sglang_version`` (None: detected on the host, else the newest
    known release), ``readonly`` (no edits: fixes and form changes are refused). Set ``host`` to a
    :class:`~specdash.hosts.base.Host` to detect the version and enable the dry run; ``python`` is the
    interpreter used on the host (default ``python3``). Public state: :attr:`command`, :attr:`report`,
    :attr:`dry_run_result`, :attr:`disagreements`.
    """

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("ctrl+f", "apply_fix", "Apply fix", id="builder.apply_fix"),
        Binding("ctrl+o", "copy_command", "Copy command", id="builder.copy"),
        Binding("ctrl+r", "dry_run", "SGLang dry run", id="builder.dry_run"),
        Binding("escape", "leave_editor", "Leave editor", id="builder.leave_editor"),
        # priority: the editor's own ctrl+a (line start) would win; a paste or a keystroke replaces the selection
        Binding("ctrl+a", "select_all", "Select all (paste or type to replace it)", id="builder.select_all",
                show=False, priority=True),
    ]

    class CommandChanged(Message):
        """The command or the version changed: ``command`` (str) and its ``report`` (ValidationReport)."""

        def __init__(self, command: str, report: ValidationReport) -> None:
            super().__init__()
            self.command = command
            self.report = report

    def __init__(self, command: str = "", sglang_version: str | None = None, readonly: bool = False, *,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._command = command
        self._version_override = sglang_version
        self._detected_version: str | None = None
        self.readonly = readonly
        self.python = "python3"
        self._host: Host | None = None
        self._report = validate_command(command, sglang_version)
        self.dry_run_result: DryRunResult | None = None
        self._pairing: PairingService | None = None
        self.disagreements: list = []
        self.model_config: dict | None = None
        self._config_path: str | None = None
        self._rendered_wrap: int | None = None  # the finding column's width when last rendered (None: not wrapped)

    # -- public API -------------------------------------------------------------------------------
    @property
    def command(self) -> str:
        """The command text as in the editor."""
        return self._command

    @property
    def report(self) -> ValidationReport:
        """The :class:`ValidationReport` of :attr:`command` for the current version."""
        return self._report

    @property
    def sglang_version(self) -> str | None:
        """The version whose rules apply: the override, else the one detected on the host, else None (newest)."""
        return self._version_override or self._detected_version

    def set_sglang_version(self, version: str | None) -> None:
        """Override the SGLang version (None: back to the detected one / newest). Raises ValueError for text that
        is not a version."""
        if version:
            from specdash.sglang.versions import parse_version

            parse_version(version)
        self._version_override = version or None
        if self.is_mounted:
            field = self.query_one("#f-version", Input)
            with field.prevent(Input.Changed):
                field.value = version or ""
        self._revalidate()

    def set_command(self, text: str) -> None:
        """Replace the command text (e.g. from the app) and re-validate."""
        self._command = text
        if self.is_mounted:
            area = self.query_one("#builder-command", TextArea)
            cursor = area.cursor_location
            with area.prevent(TextArea.Changed):
                area.load_text(text)
            # keep the cursor where the user was (clamped to the new text), not back at the start
            row = min(cursor[0], area.document.line_count - 1)
            area.cursor_location = (row, min(cursor[1], len(area.document.get_line(row))))
        self._revalidate()

    @property
    def host(self):
        """The :class:`~specdash.hosts.base.Host` the app connected (None: no host; no detection, no dry run)."""
        return self._host

    @host.setter
    def host(self, host) -> None:
        self._host = host
        self._config_path = None
        if host is not None and self.is_mounted:
            self._detect_version()
            self._maybe_fetch_config()

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        notice = Static("", id="builder-version-notice")
        notice.display = False
        yield notice
        port_note = Static("", id="builder-port-notice")  # the command's port is another server's (the app says)
        port_note.display = False
        yield port_note
        yield Static("", id="builder-headline")  # small screens: the errors and overrides, above the editor
        with Horizontal(id="builder-top"):
            area = TextArea(self._command, id="builder-command", soft_wrap=True, show_line_numbers=False,
                            read_only=self.readonly)
            area.border_title = "launch command"
            yield area
            with Vertical(id="builder-form") as form:
                form.border_title = "speculative settings"
                for field_id, dest, label in FORM_FIELDS:
                    with Horizontal(classes="form-row"):
                        yield Label(label, classes="form-label")
                        if dest == "speculative_algorithm":
                            yield Select([(a, a) for a in ALGORITHMS], id=field_id, prompt="(off)",
                                         allow_blank=True, compact=True, disabled=self.readonly)
                        else:
                            yield Input(id=field_id, compact=True, disabled=self.readonly)
                with Horizontal(classes="form-row"):
                    yield Label("sglang", classes="form-label")
                    yield Input(self._version_override or "", id="f-version", compact=True,
                                placeholder=f"{self._report.sglang_version} (newest)")
        yield Static("", id="builder-changes")  # small screens: typed -> effective changes next to the list
        with Horizontal(id="builder-bottom"):
            diags: DataTable[Any] = DataTable(id="builder-diagnostics", cursor_type="row", zebra_stripes=False)
            diags.border_title = "diagnostics"
            yield diags
            eff: DataTable[Any] = DataTable(id="builder-effective", cursor_type="none", zebra_stripes=False,
                                            show_cursor=False)
            eff.border_title = "typed → effective"
            yield eff
        yield Static("", id="builder-detail")
        pairing = PairingView(id="builder-pairing")
        pairing.border_title = "draft/target pairing"
        pairing.display = False
        yield pairing
        yield Static("", id="builder-status")

    def on_mount(self) -> None:
        area = self.query_one("#builder-command", TextArea)
        if area.text != self._command:  # set_command ran between compose and mount: the editor shows it too
            with area.prevent(TextArea.Changed):
                area.load_text(self._command)
        eff = self.query_one("#builder-effective", DataTable)
        eff.add_column("field", key="field", width=EFFECTIVE_FIELD_WIDTH)
        eff.add_column("typed", key="typed", width=EFFECTIVE_TYPED_MIN)
        eff.add_column("effective", key="effective", width=EFFECTIVE_VALUE_MIN)
        self._render_report()
        if self._host is not None:
            self._detect_version()
            self._maybe_fetch_config()

    @property
    def small_screen(self) -> bool:
        """True below 36 rows or 120 columns (the screen's ``-short`` / ``-narrow`` classes, see app.tcss): the
        pane scrolls as one page, findings wrap in their rows and the typed -> effective changes are one line."""
        try:
            screen = self.screen
        except Exception:  # noqa: BLE001 - not attached
            return False
        return screen.has_class("-short") or screen.has_class("-narrow")

    def on_resize(self) -> None:
        """Findings wrap at the list's width on a small screen: re-render them when that width changes; the
        typed -> effective columns take the table's new width."""
        self._rewrap()
        self._fit_effective_columns()

    def _rewrap(self) -> None:
        try:
            if self.is_mounted and self._wrap_width() != self._rendered_wrap:
                self._render_report()
        except NoMatches:  # shutting down
            pass

    def _wrap_width(self) -> int | None:
        """Cells of the finding column when findings wrap (small screen), else None (one line each, cut)."""
        if not self.small_screen:
            return None
        # the list's content width (inside its border and the pane's): from the terminal width, as the typed ->
        # effective columns, so the wrap does not depend on whether a layout pass ran before the first render
        width = self.app.size.width - 8
        # severity column 8 + 2 padding, the finding's 2 padding, the list's vertical scrollbar 2
        return max(20, width - 14)

    # -- events -----------------------------------------------------------------------------------
    def _fit_effective_columns(self) -> None:
        """The typed -> effective table's ``typed`` and ``effective`` columns share the table's width (at 80x24 it
        spans the screen; fixed widths left a model path cut to 9 characters beside empty space)."""
        eff = self.query_one("#builder-effective", DataTable)
        try:
            narrow = self.screen.has_class("-narrow")
        except Exception:  # noqa: BLE001 - not attached
            return
        # narrow screens: the table spans the screen (less its border and the pane's); from the terminal width, so
        # the widths do not depend on when a layout pass ran
        width = self.app.size.width - 8 if narrow else 0
        room = width - EFFECTIVE_FIELD_WIDTH - 2 * eff.cell_padding * 3 - 1
        typed = max(EFFECTIVE_TYPED_MIN, room // 2)
        widths = {"typed": typed, "effective": max(EFFECTIVE_VALUE_MIN, room - typed)}
        changed = False
        for key, column in eff.columns.items():
            fit = widths.get(str(key.value))
            if fit is not None and column.width != fit:
                column.width, column.auto_width, changed = fit, False, True
        if changed:
            eff._require_update_dimensions = True
            eff.refresh(layout=True)

    @on(TextArea.Changed, "#builder-command")
    def _text_changed(self, event: TextArea.Changed) -> None:
        self._command = event.text_area.text
        self._revalidate(from_editor=True)

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "f-version":
            text = event.value.strip()
            try:
                self.set_sglang_version(text or None)
            except ValueError as exc:
                self._status(f"[$error]{markup(exc)}[/]")
            return
        dest = next((d for fid, d, _ in FORM_FIELDS if fid == event.input.id), None)
        if dest is None or self.readonly:
            return
        self._edit_field(dest, event.value.strip())

    @on(Select.Changed, "#f-algorithm")
    def _algorithm_changed(self, event: Select.Changed) -> None:
        if self.readonly:
            return
        value = None if event.value is Select.NULL else str(event.value)
        current = self._report.typed.get("speculative_algorithm")
        if value == current:
            return
        self._edit_field("speculative_algorithm", value or "")

    @on(DataTable.RowHighlighted, "#builder-diagnostics")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    # -- actions ----------------------------------------------------------------------------------
    def action_leave_editor(self) -> None:
        """``escape``: move focus from the command editor / form to the diagnostics list, so the app's keys
        (q, l, F2 ...) work again."""
        diags = self.query_one("#builder-diagnostics", DataTable)
        diags.focus(scroll_visible=False)
        if self.small_screen:  # the page scrolls: the changes line and the list at its top, the editor above
            changes = self.query_one("#builder-changes", Static)
            anchor = changes if changes.has_class("-shown") else diags
            self.call_after_refresh(self.scroll_to_widget, anchor, animate=False, top=True)

    def action_select_all(self) -> None:
        """``ctrl+a``: select the whole launch command (or the focused form field's text), so pasting or typing
        replaces it."""
        focused = self.app.focused
        if isinstance(focused, Input):
            focused.action_select_all()
            return
        area = self.query_one("#builder-command", TextArea)
        area.focus()
        area.select_all()

    def action_apply_fix(self) -> None:
        """Apply the fix of the selected diagnostic to the command."""
        if self.readonly:
            self.notify("Read-only session: editing is disabled.", severity="warning")
            return
        diag = self._selected()
        if diag is None or diag.fix is None:
            self.notify("The selected finding has no fix.", severity="warning")
            return
        self.set_command(diag.fix.apply(self._command))
        self.notify(f"Applied: {markup(diag.fix.description)}")

    def action_copy_command(self) -> None:
        """Copy the command: OSC 52 to the terminal (tmux-wrapped when in tmux) and to the state file."""
        text = self._command.strip()
        if not text:
            self.notify("Nothing to copy.", severity="warning")
            return
        driver = getattr(self.app, "_driver", None)
        if driver is not None:
            driver.write(osc52_sequence(text))
        path = write_command_file(text)
        self.notify(f"Copied the command (also in {markup(path)})")

    def action_dry_run(self) -> None:
        """Run SGLang's own argument resolution on the host and compare it with the prediction."""
        if self._host is None:
            self.notify("No host: the dry run needs a host with SGLang installed.", severity="warning")
            return
        if not self._report.command or not self._report.command.found:
            self.notify("No launch command to check.", severity="warning")
            return
        self._status("dry run: running SGLang's own argument resolution on the host ...")
        self._run_dry_run(self._report)

    # -- workers ----------------------------------------------------------------------------------
    @work(exclusive=True, group="builder-version")
    async def _detect_version(self) -> None:
        host = self._host
        if host is None:
            return
        probe = await facts_for(host).sglang_version(self.python)
        if probe.version is not None:
            self._detected_version = probe.version
            self._revalidate()
        else:
            self._status(f"{markup(probe.problem)}; using the newest known rules")

    def _maybe_fetch_config(self) -> None:
        """Read the target's config.json on the host when the model path changed (architecture-dependent rules)."""
        path = self._report.typed.get("model_path") or self._report.effective.get("model_path")
        if self._host is None or not path or path == self._config_path:
            return
        self._config_path = path
        if self.model_config is not None:  # it belonged to the previous model path
            self.model_config = None
            self._report = validate_command(self._command, self.sglang_version, None)
        self._fetch_config(path)

    @work(exclusive=True, group="builder-config")
    async def _fetch_config(self, model_path: str) -> None:
        if self._host is None:
            return
        try:
            config = (await facts_for(self._host).model_config(model_path)).value
        except Exception:  # noqa: BLE001 - host unreachable: keep guessing from the name
            config = None
        if config is None or config == self.model_config:
            return
        self.model_config = config
        self._revalidate()

    @work(exclusive=True, group="builder-dry-run")
    async def _run_dry_run(self, report: ValidationReport) -> None:
        parsed, problem = await run_dry_run(self._host, report, self.python)
        if parsed is None:
            self._status(markup(problem or "dry run failed", max_chars=300))
            return
        self.dry_run_result = parsed
        self.disagreements = compare(report, parsed)
        verdict = "accepted" if parsed.ok else f"refused: {parsed.exception}: {parsed.message[:160]}"
        agree = ("agrees with specdash" if not self.disagreements else
                 "DISAGREES: " + "; ".join(f"{d.field} specdash={d.specdash} sglang={d.sglang}"
                                          for d in self.disagreements))
        self._status(f"SGLang {markup(parsed.version or '?')} dry run {verdict}; {agree}")
        try:
            self._render_effective()
        except NoMatches:  # shutting down
            pass

    def _maybe_pair(self) -> None:
        """Re-check the draft/target pairing when the model, draft, algorithm or version changed (files are read
        over the host and cached; SGLang's own layer choice is probed when the host has SGLang)."""
        eff = {**self._report.typed, **{k: v for k, v in self._report.effective.items() if v not in (None, "auto")}}
        model, draft = eff.get("model_path"), eff.get("speculative_draft_model_path")
        algorithm = str(eff.get("speculative_algorithm") or "")
        view = self.query_one("#builder-pairing", PairingView)
        if not model or not draft or algorithm.upper() not in ("EAGLE", "EAGLE3", "STANDALONE"):
            view.display = False
            self._pair_key = None
            return
        view.display = True
        key = (str(model), str(draft), algorithm.upper(), self.sglang_version)
        if (key, self._host) == getattr(self, "_pair_key", None):
            return
        self._pair_key = (key, self._host)
        if self._host is None:
            view.show(None, note="the pairing check reads both config.json files on the host: connect to one")
            return
        view.show(None, note=f"checking {draft} against {model} …")
        self._pair(*key)

    @work(exclusive=True, group="builder-pairing")
    async def _pair(self, model: str, draft: str, algorithm: str, version: str | None) -> None:
        from specdash.hosts.base import HostError
        from specdash.sglang.pairing import PairingService, PairLoadError

        if self._pairing is None or self._pairing.host is not self._host:
            self._pairing = PairingService(self._host, python=self.python)
        try:
            report = await self._pairing.report(model, draft, algorithm, version)
        except (PairLoadError, HostError, ValueError) as exc:
            report, note = None, str(exc)
        else:
            note = ""
        try:
            self.query_one("#builder-pairing", PairingView).show(report, note=note)
        except NoMatches:  # shutting down
            pass
        self.pairing_report = report

    pairing_report: PairingReport | None = None

    # -- internals --------------------------------------------------------------------------------
    def _edit_field(self, dest: str, value: str) -> None:
        report = self._report
        table_release = report.profile.flag_release
        option = None
        from specdash.sglang.flags import load_table

        spec = load_table(table_release).by_dest.get(dest)
        option = spec.canonical if spec else "--" + dest.replace("_", "-")
        edit = Edit("remove", dest=dest) if value == "" else Edit("set", option=option, value=value, dest=dest)
        new = Fix("", (edit,), table_release).apply(self._command)
        if new != self._command:
            self.set_command(new)

    def _revalidate(self, from_editor: bool = False) -> None:
        self._report = validate_command(self._command, self.sglang_version, self.model_config)
        if self.is_mounted:
            try:
                self._maybe_fetch_config()
                self._render_report()
                if from_editor:
                    self._sync_form()
                self._maybe_pair()
            except NoMatches:  # a worker finished while the app is shutting down
                return
        self.post_message(self.CommandChanged(self._command, self._report))

    def _sync_form(self) -> None:
        typed = self._report.typed
        for field_id, dest, _ in FORM_FIELDS:
            if dest == "speculative_algorithm":
                select = self.query_one(f"#{field_id}", Select)
                value = typed.get(dest)
                wanted = value if value in ALGORITHMS else Select.NULL
                if select.value != wanted:
                    with select.prevent(Select.Changed):
                        select.value = wanted
                continue
            field = self.query_one(f"#{field_id}", Input)
            value = typed.get(dest)
            text = "" if value is None else str(value)
            if field.value != text and not field.has_focus:
                with field.prevent(Input.Changed):
                    field.value = text

    def _render_report(self) -> None:
        self._sync_form()
        report = self._report
        diags = self.query_one("#builder-diagnostics", DataTable)
        row = diags.cursor_row
        wrap = self._wrap_width()
        self._rendered_wrap = wrap
        diags.clear(columns=True)
        diags.add_column("severity", key="severity", width=8)
        one_line = [f"{d.code}: {d.message}" + (" [fix]" if d.fix else "") + (" [link]" if d.link else "")
                    for d in report.diagnostics]
        # a fixed width either way: the auto width was left at the header's after a resize with the cursor moved
        diags.add_column("finding", key="message", width=wrap or max([7, *(cell_len(t) for t in one_line)]))
        for i, d in enumerate(report.diagnostics):
            sev = Text(_SEVERITY_TEXT[d.severity])
            sev.stylize(self._style(d.severity))
            if wrap is None:  # one line each: the detail below the tables has the whole text
                diags.add_row(sev, one_line[i], key=str(i))
                continue
            # small screen: the whole message wraps in its row, with its fix (the detail is below the fold)
            cell = Text(f"{d.code}: {d.message}")
            if d.fix:
                cell.append(f"\nfix ({key_for(self, 'builder.apply_fix')}): {d.fix.description}", style="bold")
            if d.link:
                cell.append(f"\nsee: {d.link}")
            diags.add_row(sev, cell, key=str(i), height=None)
        if report.diagnostics:
            diags.move_cursor(row=min(max(row, 0), len(report.diagnostics) - 1))
        self._render_effective()
        self._show_detail(diags.cursor_row if report.diagnostics else -1)
        self._render_headline()
        self._render_changes()
        if wrap is not None:  # measured before a layout (first frame, resize): check once laid out
            self.call_after_refresh(self._rewrap)
        errors = len(report.by_severity("error"))
        overrides = len(report.by_severity("override"))
        source = {"guessed from the model name": "guessed"}.get(report.architecture_source or "",
                                                               report.architecture_source)
        arch = f" · {markup(report.architecture)} ({markup(source)})" if report.architecture else ""
        newer = ""
        if report.profile.requested is not None:
            newer = " — version not readable: newest rules"
        elif report.version_notice:
            newer = f" — newer than {CURRENT_RELEASE}: best-guess rules"
        # the tab already says "Launch builder": a small screen's title keeps its width for the release and model
        self.border_title = (("" if self.small_screen else "Launch builder — ") +
                             f"SGLang {markup(report.sglang_version)} "
                             f"({report.profile.releases}){newer}"
                             f"{arch}")
        self._show_rules_version()
        notice = self.query_one("#builder-version-notice", Static)
        notice.update(markup(report.version_notice or ""))
        notice.display = bool(report.version_notice)
        fix, copy, dry = (key_for(self, i) for i in ("builder.apply_fix", "builder.copy", "builder.dry_run"))
        # one line at 80 columns: it is docked at the pane's bottom, under the part that scrolls on a small screen
        self._status(f"{errors} error(s) · {overrides} override(s) · {fix} fix · {copy} copy · {dry} dry run")

    def _show_rules_version(self) -> None:
        """The ``sglang`` field shows the release whose rules the diagnostics use, as the title does: what the user
        typed, else (dimmed, as a placeholder) the detected release, e.g. ``0.5.0rc0 (detected)``, else the newest
        known one, e.g. ``0.5.23 (newest)``. Typing a release overrides it; emptying the field goes back."""
        field = self.query_one("#f-version", Input)
        if self._version_override:
            return
        report = self._report
        if self._detected_version and report.profile.requested is None:
            field.placeholder = f"{report.sglang_version} (detected)"
        elif self._detected_version:  # detected text that is not a release: the newest rules apply
            field.placeholder = f"{report.sglang_version} (newest; host: {self._detected_version})"
        else:
            field.placeholder = f"{report.sglang_version} (newest)"

    def _render_headline(self) -> None:
        """On a small screen (the CSS shows it below 36 rows or 120 columns) the diagnostics list is below the
        fold: the first two errors / overrides (errors first), one line each, above the editor, e.g. ``OVERRIDE
        --speculative-num-draft-tokens 16 -> 2 (draft-tokens-adjusted)``; an override without known values, and an
        error, give their message (cut at the edge); then how many more and how to reach them. Hidden when there is
        none."""
        headline = self.query_one("#builder-headline", Static)
        wanted = [d for d in self._report.diagnostics if d.severity == "error"]
        wanted += [d for d in self._report.diagnostics if d.severity == "override"]
        text = Text()  # one line each (CSS: nowrap): the list and the detail have the rest
        for d in wanted[:2]:
            text.append(_SEVERITY_TEXT[d.severity] + " ", style=self._style(d.severity))
            if d.severity == "override" and d.flags and d.from_value is not None and d.to_value is not None:
                text.append(f"{d.flags[0]} {d.from_value} -> {d.to_value} ({d.code})\n")
            else:
                text.append(f"{d.code}: {d.message}\n")
        if wanted:
            more = f"{len(wanted) - 2} more · " if len(wanted) > 2 else ""
            text.append(f"{more}{key_for(self, 'builder.leave_editor')}: the list, each finding's detail and fix "
                        f"({key_for(self, 'builder.apply_fix')})", style="dim")
        headline.update(text)
        headline.set_class(bool(wanted), "-shown")

    def _render_changes(self) -> None:
        """Small screens: what SGLang will run differently from what was typed, one line above the findings, e.g.
        ``typed → effective: num_draft_tokens 16 → 2`` (the whole table is below them). Hidden when nothing
        typed changes."""
        report = self._report
        changed = [f for f in _EFFECTIVE_ROWS if f in report.typed and f in report.effective
                   and report.typed.get(f) != report.effective.get(f)]
        line = self.query_one("#builder-changes", Static)
        text = Text("typed → effective: ", style="bold")
        for n, field in enumerate(changed):
            value = report.effective.get(field)
            text.append(("" if n == 0 else " · ") + f"{self._field_label(field)} {report.typed.get(field)} → ")
            text.append("auto" if value is None else str(value), style=self._style("override"))
        line.update(text if changed else "")
        line.set_class(bool(changed), "-shown")

    @staticmethod
    def _field_label(field: str) -> str:
        return field.replace("speculative_", "").replace("disable_overlap_schedule", "no_overlap_schedule")

    def _render_effective(self) -> None:
        report = self._report
        eff = self.query_one("#builder-effective", DataTable)
        eff.clear()
        sglang: dict[str, Any] = (self.dry_run_result.resolved
                                  if self.dry_run_result is not None and self.dry_run_result.ok else {})
        # what SGLang changes comes first: the table is short, and those rows are why it is there
        changed = [f for f in _EFFECTIVE_ROWS if f in report.typed and report.typed.get(f) != report.effective.get(f)]
        for field in changed + [f for f in _EFFECTIVE_ROWS if f not in changed]:
            if field not in report.effective:
                continue
            value = report.effective.get(field)
            typed = report.typed.get(field)
            shown = Text("auto" if value is None else str(value))
            if field in report.typed and typed != value:
                shown.stylize(self._style("override"))
            if field in sglang and value is not None and sglang[field] != value:
                shown.append(f" (sglang: {sglang[field]})", style=self._style("error"))
            eff.add_row(self._field_label(field), "" if typed is None else str(typed), shown, key=field)
        self._fit_effective_columns()

    def _show_detail(self, row: int) -> None:
        detail = self.query_one("#builder-detail", Static)
        if row < 0 or row >= len(self._report.diagnostics):
            detail.update("")
            return
        d = self._report.diagnostics[row]
        fix = f"\nfix ({key_for(self, 'builder.apply_fix')}): {d.fix.description}" if d.fix else ""
        where = f" [{d.exception} at {d.stage}]" if d.severity == "error" and d.exception else ""
        text = Text(f"{_SEVERITY_TEXT[d.severity]} {d.code}{where}: ", style=self._style(d.severity))
        text.append(d.message + fix)
        if d.link:  # a known SGLang issue: the public thread, a terminal hyperlink the user can select and copy
            text.append("\nsee: ", style="bold")
            text.append(d.link, style=f"underline link {d.link}")
        detail.update(text)

    def _selected(self):
        diags = self.query_one("#builder-diagnostics", DataTable)
        row = diags.cursor_row
        if 0 <= row < len(self._report.diagnostics):
            return self._report.diagnostics[row]
        return None

    def set_port_note(self, text: str) -> None:
        """Show ``text`` (plain) above the editor, or nothing when it is "": the app's word that the command's port
        is already another server's (the followed one, by PID), so ``l`` would fail."""
        try:
            note = self.query_one("#builder-port-notice", Static)
        except NoMatches:  # not composed yet, or shutting down
            return
        note.update(markup(text))
        note.display = bool(text)

    def _status(self, content: str) -> None:
        """Show ``content`` (markup: outside text in it goes through :func:`specdash.text.display.markup`)."""
        if self.is_mounted:
            try:
                self.query_one("#builder-status", Static).update(content)
            except NoMatches:  # shutting down
                pass

    def _style(self, severity: str) -> str:
        """A Rich style from the app theme's colours for ``severity`` (themes restyle it)."""
        spec = _SEVERITY_STYLE[severity]
        variables = self.app.theme_variables if self.is_attached else {}
        bold = spec.startswith("bold ")
        name = spec.split("$", 1)[1]
        colour = variables.get(name, "")
        return ("bold " if bold else "") + colour
