"""Help screen (F1 / ?): every key of the app and of each pane, from their binding tables."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Key
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

from specdash.app.keymap import bound_key, key_name
from specdash.app.styles import load_tcss
from specdash.app.toasts import Notice

_KEY_NAMES = {"slash": "/", "question_mark": "?", "left_square_bracket": "[", "right_square_bracket": "]",
              "left_curly_bracket": "{", "right_curly_bracket": "}", "plus": "+", "minus": "-", "escape": "esc"}


#: how many recent notices the help screen lists (newest first)
NOTICES_SHOWN = 5


def _key_label(key: str) -> str:
    """``"f1,question_mark"`` → ``"f1 / ?"``; a key the table does not name as Textual shows it (a remapped
    ``full_stop`` is ``.``, as the footer shows it)."""
    return " / ".join(_KEY_NAMES.get(part.strip()) or format_key(part.strip()) for part in key.split(","))


class HelpScreen(ModalScreen[None]):
    """Lists the key bindings of the app and of every widget class given, section by section.

    ``sections`` is a list of ``(title, bindings)`` where bindings are Textual ``Binding`` objects or tuples;
    ``keymap`` (binding id -> keys, config.yaml's remapping) replaces the default keys shown; ``notices`` (newest
    first, :class:`~specdash.app.toasts.Notice`) are listed whole above the keys.
    """

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss_help", "Close", id="help.close")]

    def __init__(self, sections: list[tuple[str, list]], keymap: dict[str, str] | None = None,
                 notices: list[Notice] | None = None) -> None:
        super().__init__()
        self.sections = sections
        self.keymap = dict(keymap or {})
        self.notices = list(notices or [])

    def compose(self) -> ComposeResult:
        body = Text()
        if self.notices:  # a toast cut on a small screen says its whole text is here
            body.append("Recent notices", style="bold")
            body.append(f"  (newest first; the last {len(self.notices[:NOTICES_SHOWN])})\n")
            for notice in self.notices[:NOTICES_SHOWN]:
                body.append(f"  {notice.at} ", style="dim")
                if notice.title:
                    body.append(f"{notice.title}: ", style="bold")
                body.append(f"{notice.text}\n")
            body.append("\n")
        closes = bound_key("help.close", self.keymap)  # the key the keymap binds, "esc" by default
        body.append_text(Text.assemble(("specdash keys", "bold"), f"  ({closes} closes)\n\n"))
        for title, bindings in self.sections:
            rows = []
            for b in bindings:
                binding = b if isinstance(b, Binding) else Binding(*b)
                if not binding.description:
                    continue
                key = self.keymap.get(binding.id, binding.key) if binding.id else binding.key
                rows.append(Text.assemble("  ", (f"{_key_label(key):<18}", "bold"), " ", binding.description, "\n"))
            if rows:
                body.append(f"{title}\n", style="underline")
                body.append_text(Text().join(rows))
                body.append("\n")
        with VerticalScroll(id="help-dialog"):
            yield Static(body, id="help-body")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)

    def on_key(self, event: Key) -> None:
        """The key that opens help (``app.help``, remapped in config.yaml) closes it too, as F1 does by default."""
        opens = {key_name(part) for part in (self.keymap.get("app.help") or "").split(",") if part.strip()}
        if event.key in opens:
            event.stop()
            self.dismiss(None)
