"""Focus owns keys: while a text-entry or selection widget has focus, a printable key belongs to that widget.

Textual already keeps printable keys inside an ``Input`` or an editable ``TextArea`` (their
``check_consume_key``), but a collapsed ``Select`` consumes nothing, so typing a launch command into the
builder's algorithm dropdown or the bench pane's workload selector ran ``l`` launch, ``x`` stop, ``r`` restart,
``b`` benchmark, ``S`` sweep and ``q`` quit. The app asks :func:`key_blocked` for every key before it runs a
binding (:meth:`specdash.app.main.SpecdashApp.on_key`): one rule for the app's keys and every pane's keys.

The rule is about keys, not actions: ``ctrl+q`` (quit), the F-keys, escape and enter keep working while typing,
and a key remapped in ``config.yaml`` is judged by the key the user presses.
"""

from __future__ import annotations

import sys

from textual.keys import key_to_character
from textual.widget import Widget
from textual.widgets import Input, Select


def typing_widget_types() -> tuple[type[Widget], ...]:
    """The widgets that own printable keys while they (or a widget inside them, e.g. a Select's open list) have
    focus: Input, TextArea and Select. TextArea only once Textual's module for it is loaded: no TextArea exists
    before, and importing it would cost start-up time the first frame does not need (the panes with one are
    built after it)."""
    text_area = getattr(sys.modules.get("textual.widgets._text_area"), "TextArea", None)
    return (Input, Select) if text_area is None else (Input, text_area, Select)


def typing_widget(focused: Widget | None) -> Widget | None:
    """The text-entry or selection widget that owns the keyboard when ``focused`` has focus (``focused`` itself or
    the widget it is part of), or None. A read-only TextArea is a viewer: it owns no keys."""
    if focused is None:
        return None
    kinds = typing_widget_types()
    for node in focused.ancestors_with_self:
        if isinstance(node, kinds):
            if not isinstance(node, (Input, Select)) and getattr(node, "read_only", False):  # a TextArea
                return None
            return node
    return None


def is_printable_key(key: str, character: str | None) -> bool:
    """True for a key that types a character (``l``, ``L``, ``space``, ``question_mark``); False for ``ctrl+q``,
    ``f3``, ``escape``, ``enter``, arrows."""
    if character is None:
        character = key_to_character(key)
    return character is not None and len(character) == 1 and character.isprintable()


def key_blocked(focused: Widget | None, key: str, character: str | None, active_bindings: dict) -> bool:
    """True when the binding ``key`` would run must not run: a typing widget has focus, the key is printable and
    the binding that would take it belongs outside that widget (the app's ``l x r q``, a pane's ``b S K``).
    ``active_bindings``: Textual's ``Screen.active_bindings`` (key -> ActiveBinding, the closest node first)."""
    owner = typing_widget(focused)
    if owner is None or not is_printable_key(key, character):
        return False
    active = active_bindings.get(key)
    if active is None:
        return False
    node = active.node
    inside = node is owner or (isinstance(node, Widget) and owner in node.ancestors_with_self)
    return not inside
