"""Read and edit one flag of a launch command the way SGLang's argparse reads it, keeping the user's text.

The command is parsed once by :func:`specdash.sglang.command.parse_command` (shell words with their offsets) and
matched against one release's flag table by :func:`specdash.sglang.arguments.parse_arguments`, exactly as the
validator does. So an abbreviation resolves as argparse resolves it (``--po 31000`` is ``--port 31000``: SGLang
builds its parser with argparse's default ``allow_abbrev=True`` in every release, server_args.py
``ServerArgs.add_cli_args``), ``--flag=value`` equals ``--flag value``, an alias names its flag (``--tp`` is
``--tensor-parallel-size``) and the last occurrence wins. An underscore spelling (``--speculative_num_steps``),
which SGLang's argparse rejects as unrecognized, is taken to mean the dashed flag, so editing it also repairs it.

Edits change only the words concerned, in place: other flags, line continuations (``\\`` newline), comments,
quoting, ``export`` lines and ``NAME=value`` prefixes survive byte for byte. ``release`` everywhere is a flag-table
release (``Profile.flag_release``, e.g. ``"0.5.23"``); ``None`` means the newest release specdash knows.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from specdash.sglang.arguments import Occurrence, ParsedArguments, parse_arguments
from specdash.sglang.command import LaunchCommand, parse_command
from specdash.sglang.fixes import close_command, drop_empty_continuations, remove_span, splice
from specdash.sglang.flags import FlagSpec, FlagTable, load_table, normalise_foreign
from specdash.sglang.versions import profile_for

#: SGLang's default HTTP port (server_args.py ``ServerArgs.port: int = 30000``, unchanged since 0.1).
DEFAULT_PORT = 30000

FlagValue = str | int | float | bool | None


class CommandEditError(ValueError):
    """The text holds no launch command to edit (one-line message)."""


def flag_table(release: str | None) -> FlagTable:
    """The flag table of ``release`` (``None``: the newest known release)."""
    return load_table(release or profile_for(None).flag_release)


def parse(text: str, release: str | None = None) -> tuple[LaunchCommand, ParsedArguments, FlagTable]:
    """The launch command in ``text``, its arguments as argparse of ``release`` sees them, and that table."""
    table = flag_table(release)
    command = parse_command(text)
    return command, parse_arguments(command.args, table), table


def _spec_of(option: str, table: FlagTable) -> FlagSpec | None:
    lookup = table.lookup(option.split("=", 1)[0])
    return lookup.spec if lookup.kind in ("exact", "prefix") else None


def _names(occ: Occurrence, spec: FlagSpec | None, option: str) -> bool:
    """``occ`` sets the flag ``spec`` (or, for an option the table does not know, ``option``), also when typed
    with underscores."""
    if spec is not None and occ.spec is spec:
        return True
    if occ.spec is not None:
        return False
    spellings = spec.options if spec is not None else (option,)
    return normalise_foreign(occ.typed) in {normalise_foreign(o) for o in spellings}


def _occurrences(parsed: ParsedArguments, spec: FlagSpec | None, option: str) -> list[Occurrence]:
    return [o for o in parsed.occurrences if o.words and _names(o, spec, option)]


def _quote(value: Any) -> str:
    text = str(value)
    return shlex.quote(text) if text else "''"


def flag_value(text: str, option: str, release: str | None = None) -> Any:
    """The value argparse keeps for ``option`` (any spelling SGLang accepts: ``--port``, ``--po``, ``--tp``) in
    the launch command in ``text``: converted with the flag's type (``31000``, ``0.8``, ``"EAGLE3"``), ``True``
    for a switch, ``None`` when the flag is absent. A flag the release does not know gives its raw value text."""
    command, parsed, table = parse(text, release)
    if not command.found:
        return None
    spec = _spec_of(option, table)
    found = _occurrences(parsed, spec, option)
    if not found:
        return None
    last = found[-1]
    if last.spec is not None and last.error is None:
        return last.value
    return " ".join(last.values) if last.values else True


def launch_port(text: str, release: str | None = None) -> int:
    """The HTTP port the launch command in ``text`` will listen on under ``release``: ``--port``'s value in any
    spelling argparse accepts (``--port=N``, the abbreviation ``--po N``), else SGLang's default 30000."""
    value = flag_value(text, "--port", release)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536 else DEFAULT_PORT


def known_launch_port(text: str, release: str | None = None) -> int | None:
    """:func:`launch_port`, or None when ``--port`` is given a value that is no TCP port 1-65535 (``0``, ``70000``,
    a word): the port the server will listen on is then not known (never SGLang's default 30000)."""
    given = flag_value(text, "--port", release)
    port = launch_port(text, release)
    return port if given is None or given == port else None


def _require(command: LaunchCommand) -> None:
    if not command.found:
        raise CommandEditError("no launch command found to edit (expected e.g. python -m sglang.launch_server ...)")


def set_flag(text: str, option: str, value: FlagValue, release: str | None = None) -> str:
    """``text`` with ``option`` set to ``value`` (``True``: a bare switch; ``None`` or ``False``: the flag removed).

    The last occurrence keeps its place and spelling (``--speculative-algo X`` stays abbreviated,
    ``--flag=old`` becomes ``--flag=new``) and only its value words change; earlier occurrences, which argparse
    ignores, are removed; an underscore spelling is renamed to the flag's canonical name. Absent, the flag is
    appended after the command's last argument (on its line). Raises :class:`CommandEditError` when ``text``
    holds no launch command."""
    command, parsed, table = parse(text, release)
    _require(command)
    spec = _spec_of(option, table)
    found = _occurrences(parsed, spec, option)
    if value is None or value is False:
        return _remove(text, found)
    name = spec.canonical if spec is not None else option
    rendered = None if value is True else _quote(value)
    if not found:
        extra = name if rendered is None else f"{name} {rendered}"
        return close_command(splice(text, command.end, command.end, f" {extra}"))
    last = found[-1]
    splices: list[tuple[int, int, str]] = []
    option_word = last.words[0]
    typed = last.typed if last.spec is not None else name
    if last.lookup.explicit is not None:
        new_word = typed if rendered is None else f"{typed}={rendered}"
        splices.append((option_word.start, option_word.end, new_word))
    else:
        if typed != last.typed:
            splices.append((option_word.start, option_word.end, typed))
        if len(last.words) > 1:
            splices.append((last.words[1].start, last.words[-1].end, rendered or ""))
        elif rendered is not None:
            splices.append((option_word.end, option_word.end, f" {rendered}"))
    for start, end, new in sorted(splices, reverse=True):
        if not new and start < end:
            text = remove_span(text, start, end)
        else:
            text = splice(text, start, end, new)
    return _remove(text, found[:-1])


def _remove(text: str, occurrences: list[Occurrence]) -> str:
    for occ in sorted(occurrences, key=lambda o: o.start, reverse=True):
        text = remove_span(text, occ.start, occ.end)
    return close_command(drop_empty_continuations(text))


def remove_flags(text: str, predicate: Callable[[str], bool], release: str | None = None) -> str:
    """``text`` without every flag (with its value words) whose canonical ``--name`` satisfies ``predicate``
    (a flag the release does not know is judged by its dashed spelling). Raises :class:`CommandEditError` when
    ``text`` holds no launch command."""
    command, parsed, _ = parse(text, release)
    _require(command)
    doomed = [o for o in parsed.occurrences if o.words and predicate(
        o.spec.canonical if o.spec is not None else normalise_foreign(o.typed))]
    return _remove(text, doomed)


def remove_speculative_flags(text: str, release: str | None = None) -> str:
    """``text`` without any ``--speculative*`` flag: the no-speculation baseline of the same launch."""
    return remove_flags(text, lambda name: name.startswith("--speculative"), release)
