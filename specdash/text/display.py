"""Display sanitizer: the one function every piece of outside text passes before it is shown — log lines, process
names, HTTP bodies, session text, file paths, host messages — in the console and in every headless command.

:func:`clean` removes what a terminal would obey instead of showing: ANSI/VT escape sequences (``ESC [ ... m``,
OSC title-set ``ESC ] 0; ... BEL``, ``ESC c``), the 8-bit CSI/OSC/DCS introducers (U+009B, U+009D, U+0090) and every
other C0 and C1 control character (U+0000-U+001F, U+007F-U+009F; a tab becomes spaces, line breaks are kept only when
asked), the bidirectional overrides and isolates that reorder what is shown (U+202A-U+202E, U+2066-U+2069, U+200E,
U+200F, U+061C: "Trojan Source", CVE-2021-42574), and lone surrogates (from ``surrogateescape`` decoding). It can also
cut the result to a length, saying how much was cut.

:func:`markup` is :func:`clean` plus escaping for Rich/Textual markup, for text placed into a markup string (titles,
notices, ``Static`` content): every ``[`` becomes ``\\[``, so ``[/b]`` in a ``--log`` path is shown, never parsed.

Pure functions, no Textual import.
"""

from __future__ import annotations

import re

#: ESC-introduced sequences: CSI (``ESC [``), OSC/DCS/SOS/PM/APC strings (to BEL or ST), two-character escapes;
#: and their 8-bit forms (U+009B CSI, U+009D OSC, U+0090 DCS, U+0098 SOS, U+009E PM, U+009F APC).
_ESCAPES_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_UNSAFE_RE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_UNSAFE_NO_NEWLINE_RE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_UNSAFE_ANY_RE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")


def clean(text: object, *, newlines: bool = False, max_chars: int | None = None) -> str:
    """``text`` (``str()`` of anything) safe to print: no escape sequences, controls, bidi overrides or lone
    surrogates (see module doc). ``newlines=True`` keeps ``\\n``; otherwise a line break becomes a space.
    ``max_chars`` cuts the result, ending it with ``… [N more characters]``. Never raises."""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 - a hostile __str__ must not crash a print
            text = "<unprintable>"
    if _UNSAFE_ANY_RE.search(text) is not None:
        if "\x1b" in text or "\x9b" in text or "\x9d" in text or "\x90" in text:
            text = _ESCAPES_RE.sub("", text)
        if "\t" in text:
            text = text.expandtabs(4)
        if not newlines:
            text = text.replace("\r\n", " ").replace("\n", " ")
        text = (_UNSAFE_RE if newlines else _UNSAFE_NO_NEWLINE_RE).sub("", text)
    if max_chars is not None and len(text) > max_chars:
        text = f"{text[:max_chars]}… [{len(text) - max_chars} more characters]"
    return text


def escape_markup(text: str) -> str:
    """``text`` with every ``[`` escaped for Textual markup: ``\\[`` (Textual 8 reads ``\\[`` as a literal bracket
    and never collapses backslashes, so nothing else needs escaping)."""
    return text.replace("[", "\\[") if "[" in text else text


def markup(text: object, *, max_chars: int | None = None, newlines: bool = False) -> str:
    """:func:`clean` then :func:`escape_markup`: outside text ready to be placed inside a markup string.
    ``newlines=True`` keeps its line breaks (a dialog body of several lines), otherwise each becomes a space."""
    return escape_markup(clean(text, max_chars=max_chars, newlines=newlines))
