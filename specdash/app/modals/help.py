"""Help screen (F1 / ?): every key of the app and of each pane, from their binding tables."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from specdash.app.styles import load_tcss


_KEY_NAMES = {"slash": "/", "question_mark": "?", "left_square_bracket": "[", "right_square_bracket": "]",
              "left_curly_bracket": "{", "right_curly_bracket": "}", "plus": "+", "minus": "-", "escape": "esc"}


def _key_label(key: str) -> str:
    """``"f1,question_mark"`` → ``"f1 / ?"``."""
    return " / ".join(_KEY_NAMES.get(part.strip(), part.strip()) for part in key.split(","))


class HelpScreen(ModalScreen[None]):
    """Lists the key bindings of the app and of every widget class given, section by section.

    ``sections`` is a list of ``(title, bindings)`` where bindings are Textual ``Binding`` objects or tuples.
    """

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss_help", "Close", id="help.close")]

    def __init__(self, sections: list[tuple[str, list]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        lines: list[str] = ["[b]specdash keys[/b]  (esc closes)\n"]
        for title, bindings in self.sections:
            rows = []
            for b in bindings:
                binding = b if isinstance(b, Binding) else Binding(*b)
                if not binding.description:
                    continue
                rows.append(f"  [b]{escape(f'{_key_label(binding.key):<18}')}[/b] {escape(binding.description)}")
            if rows:
                lines.append(f"[u]{title}[/u]")
                lines.extend(rows)
                lines.append("")
        with VerticalScroll(id="help-dialog"):
            yield Static("\n".join(lines), id="help-body")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
