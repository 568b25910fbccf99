"""Modal that asks whether to trust an unknown SSH host key (never accepted silently)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from specdash.app.keymap import key_for
from specdash.app.styles import load_tcss


class HostKeyScreen(ModalScreen[bool]):
    """Shows host, key type and SHA256 fingerprint; dismisses with True for "trust" (append to known_hosts)
    and False for "cancel"."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("t", "trust", "Trust and save", id="hostkey.trust"),
        Binding("escape,c", "cancel", "Cancel", id="hostkey.cancel"),
    ]

    def __init__(self, host: str, port: int, key_type: str, fingerprint: str, known_hosts: str) -> None:
        super().__init__()
        self.host, self.port, self.key_type, self.fingerprint, self.known_hosts = (
            host, port, key_type, fingerprint, known_hosts)

    def compose(self) -> ComposeResult:
        with Vertical(id="hostkey-dialog"):
            yield Static("Unknown host key", id="hostkey-title")
            yield Static(
                f"The authenticity of host [b]{self.host}[/b] (port {self.port}) can't be established.\n\n"
                f"{self.key_type} key fingerprint is\n[b]{self.fingerprint}[/b]\n\n"
                f"Compare it with the server's (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub).\n"
                f"Trusting appends the key to {self.known_hosts}.",
                id="hostkey-body",
            )
            with Horizontal(id="hostkey-buttons"):
                yield Button(f"Trust ({key_for(self, 'hostkey.trust')})", variant="warning", id="trust")
                yield Button(f"Cancel ({key_for(self, 'hostkey.cancel')})", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")

    def action_trust(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
