"""Set and remove flags in a launch command string (pure), for turning a sweep point into a command.

Flags are matched the way SGLang's argparse matches them (facts sheet §1): ``_`` and ``-`` are the same
(``--speculative_num_steps``), ``--flag=value`` equals ``--flag value``, and an unambiguous prefix names the flag
(``--speculative-algo`` for ``--speculative-algorithm``). A flag's value is the next word unless that word starts
with ``--``. Backslash-newline continuations are joined; the result is one line quoted with ``shlex.join``.
"""

from __future__ import annotations

import shlex

FlagValue = str | int | float | bool | None


class CommandEditError(ValueError):
    """The command cannot be split into shell words (one-line message)."""


def split_command(command: str) -> list[str]:
    """Shell words of ``command`` (continuations joined). Raises :class:`CommandEditError` on bad quoting."""
    try:
        return shlex.split(command.replace("\\\r\n", " ").replace("\\\n", " "))
    except ValueError as exc:
        raise CommandEditError(f"cannot split the launch command: {exc}") from None


def _canonical(word: str) -> str:
    return word.split("=", 1)[0].replace("_", "-")


def _names_flag(word: str, flag: str) -> bool:
    """``word`` (a ``--`` word) names ``flag`` exactly or as an argparse prefix abbreviation."""
    if not word.startswith("--"):
        return False
    name = _canonical(word)
    target = flag.replace("_", "-")
    return name == target or (len(name) > 2 and target.startswith(name))


def _spans(words: list[str]) -> list[tuple[int, int]]:
    """(start, end) index spans of each ``--flag [value]`` in ``words``."""
    spans = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and len(word) > 2:
            takes_next = "=" not in word and i + 1 < len(words) and not words[i + 1].startswith("--")
            end = i + 2 if takes_next else i + 1
            spans.append((i, end))
            i = end
        else:
            i += 1
    return spans


def flag_value(command: str, flag: str) -> str | bool | None:
    """The value of ``flag`` in ``command``: its string value, ``True`` for a bare flag, ``None`` when absent.
    The last occurrence wins, as in argparse."""
    words = split_command(command)
    found: str | bool | None = None
    for start, end in _spans(words):
        if _names_flag(words[start], flag):
            word = words[start]
            found = word.split("=", 1)[1] if "=" in word else (words[start + 1] if end - start == 2 else True)
    return found


def remove_flags(command: str, predicate) -> str:
    """``command`` without every flag (and its value) whose canonical ``--name`` satisfies ``predicate(name)``."""
    words = split_command(command)
    drop: set[int] = set()
    for start, end in _spans(words):
        if predicate(_canonical(words[start])):
            drop.update(range(start, end))
    return shlex.join(w for i, w in enumerate(words) if i not in drop)


def set_flag(command: str, flag: str, value: FlagValue) -> str:
    """Return ``command`` with ``flag`` set to ``value``: every existing spelling of the flag is removed, then
    ``flag value`` is appended (``True``: bare ``flag``; ``None`` or ``False``: only removed)."""
    words = split_command(command)
    drop: set[int] = set()
    for start, end in _spans(words):
        if _names_flag(words[start], flag):
            drop.update(range(start, end))
    kept = [w for i, w in enumerate(words) if i not in drop]
    if value is True:
        kept.append(flag)
    elif value is not None and value is not False:
        kept.extend([flag, str(value)])
    return shlex.join(kept)


def remove_speculative_flags(command: str) -> str:
    """``command`` without any ``--speculative*`` flag: the no-speculation baseline of the same launch."""
    return remove_flags(command, lambda name: name.startswith("--speculative"))
