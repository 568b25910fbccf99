"""What ``--readonly`` (and a replay) hides: the keys that change the server or the host.

In a read-only session the footer and the help screen must not advertise them, and pressing one says in one line
why nothing happens. The app's ``check_action`` and the panes' hide the actions (:func:`hidden`); the app answers
their keys (:func:`refusal`).
"""

from __future__ import annotations

#: binding id -> (action name, what the refusal says is disabled)
MUTATING_BINDINGS: dict[str, tuple[str, str]] = {
    "server.launch": ("launch", "launching a server"),
    "server.launch_force": ("launch", "launching a server"),
    "server.stop": ("stop_server", "stopping the server"),
    "server.restart": ("restart_server", "restarting the server"),
    "bench.run": ("run_bench", "benchmarking"),
    "bench.sweep": ("sweep", "the depth sweep"),
    "gpus.kill": ("kill", "killing"),
}
MUTATING_ACTIONS = frozenset(action for action, _ in MUTATING_BINDINGS.values())


def hidden(readonly: bool, action: str) -> bool:
    """True when ``action`` (a Textual action name, without parameters) is off in this session."""
    return readonly and action in MUTATING_ACTIONS


def refusal_text(what: str) -> str:
    """The one-line notice for a refused mutating action, e.g. ``Read-only session: killing is disabled.``"""
    return f"Read-only session: {what} is disabled."


def refusal(key: str, keymap: dict[str, str] | None = None) -> str | None:
    """The notice for ``key`` (a Textual key name, e.g. ``"l"``) when it is bound to a mutating action, by default
    or through ``keymap`` (binding id -> comma-separated keys, config.yaml's remapping); None otherwise."""
    from specdash.app.keymap import binding_table, key_name

    table = binding_table()
    for binding_id, (_, what) in MUTATING_BINDINGS.items():
        keys = (keymap or {}).get(binding_id) or table.get(binding_id, ("", ""))[0]
        if key_name(key) in (key_name(part) for part in keys.split(",")):  # "!" as typed in config.yaml is the
            return refusal_text(what)  # key Textual names "exclamation_mark"
    return None
