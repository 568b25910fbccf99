"""Apply :class:`~specdash.sglang.diagnostics.Edit` operations to a command text, in place.

Each edit re-parses the current text (so offsets are always right) and changes only the words it concerns:
a value is replaced where it stands, a new flag is appended after the command's last argument (on the same line,
so backslash continuations keep working), a removed flag takes its trailing blanks with it and a continuation
line left empty is dropped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from specdash.sglang.arguments import parse_arguments
from specdash.sglang.command import parse_command
from specdash.sglang.diagnostics import Edit
from specdash.sglang.flags import load_table, normalise_foreign


def _quote(value) -> str:
    text = str(value)
    return shlex.quote(text) if text else "''"


def splice(text: str, start: int, end: int, new: str) -> str:
    """``text`` with the characters ``[start, end)`` replaced by ``new``."""
    return text[:start] + new + text[end:]


def remove_span(text: str, start: int, end: int) -> str:
    """``text`` without ``[start, end)`` and the blanks that separated it. Offsets of text before ``start`` stay
    valid, so several spans can be removed last-first; call :func:`drop_empty_continuations` once afterwards to
    drop a continuation line (``  \\`` alone on its line) that became empty."""
    # take trailing blanks too (not newlines or a continuation backslash)
    while end < len(text) and text[end] in " \t":
        end += 1
    # or, at the end of a line, the blanks before it (not before a continuation "\\": the word before would be
    # glued to the next line's first word)
    if end >= len(text) or text[end] == "\n":
        while start > 0 and text[start - 1] in " \t":
            start -= 1
    return text[:start] + text[end:]


def drop_empty_continuations(text: str) -> str:
    """Drop continuation lines left empty by removals (``\\`` alone on a line, also the last one)."""
    return re.sub(r"\n[ \t]*\\[ \t]*(?=\n|\Z)", "", text)


def close_final_continuation(text: str, end: int) -> str:
    """``text`` without a dangling continuation after the command's last word (``end``: its end offset, as
    :attr:`specdash.sglang.command.LaunchCommand.end` gives it): a ``\\`` ending that word's line whose next line
    is blank or missing continues the command onto nothing. The shell then ends the command anyway, but the text
    misleads, and a runner that strips the final newline (``c=$(cat file)``) hands the ``\\`` to the program
    as a literal argument (argparse: ``error: unrecognized arguments: \\``). The backslash and the blanks before
    it go with the blank line (one newline stays). Any other text is returned unchanged."""
    i = end
    while i < len(text) and text[i] in " \t":
        i += 1
    if not text.startswith("\\", i):
        return text
    j = i + 1
    if j == len(text):
        return text[:_blanks_before(text, i, end)]
    if text.startswith("\r\n", j):
        j += 2
    elif text.startswith("\n", j):
        j += 1
    else:
        return text
    k = j
    while k < len(text) and text[k] in " \t":
        k += 1
    if k < len(text) and text[k] not in "\r\n":
        return text
    start = _blanks_before(text, i, end)
    # "a \\<newline><blank line>": the blank line's newline ends the command; "a \\<newline>": that newline does
    return text[:start] + (text[k:] if k < len(text) else text[i + 1:j])


def close_command(text: str) -> str:
    """``text`` whose launch command ends whole: no ``\\`` continuing its last line onto a blank line or the end
    of the text (left when the flags of the last lines were removed, or typed so), see
    :func:`close_final_continuation`; ``text`` itself when it holds no launch command."""
    command = parse_command(text)
    if not command.found:
        return text
    # a "\\" that ends the text is read as a word of nothing typed (raw ""): the launch wrapper runs the command
    # with a final newline, where it is a continuation onto nothing
    typed = [word for word in command.args if word.raw]
    return close_final_continuation(text, typed[-1].end if typed else command.end)


def _blanks_before(text: str, i: int, floor: int) -> int:
    """The offset where the run of blanks ending at ``i`` begins (not before ``floor``)."""
    while i > floor and text[i - 1] in " \t":
        i -= 1
    return i


def _apply_one(text: str, edit: Edit, release: str) -> str:
    if edit.kind == "replace_all":
        return str(edit.value)
    cmd = parse_command(text)
    if not cmd.found:
        if edit.kind == "set":
            option = edit.option or ""
            extra = option if edit.value is None else f"{option} {_quote(edit.value)}"
            return (text.rstrip() + " " + extra).lstrip()
        return text
    table = load_table(release)
    parsed = parse_arguments(cmd.args, table)
    if edit.kind == "set":
        occ = parsed.last(edit.dest) if edit.dest else None
        if occ is not None:
            if edit.value is None:
                return text
            word = occ.words[0]
            if occ.lookup.explicit is not None:
                return splice(text, word.start, word.end, f"{occ.typed}={_quote(edit.value)}")
            if len(occ.words) > 1:
                return splice(text, occ.words[1].start, occ.words[-1].end, _quote(edit.value))
            return splice(text, word.end, word.end, f" {_quote(edit.value)}")
        option = edit.option or ""
        extra = option if edit.value is None else f"{option} {_quote(edit.value)}"
        return splice(text, cmd.end, cmd.end, f" {extra}")
    if edit.kind == "remove":
        targets = []
        for occ in parsed.occurrences:
            if edit.dest is not None and occ.spec is not None and occ.spec.dest == edit.dest:
                targets.append(occ)
            elif edit.typed is not None and normalise_foreign(occ.typed) == normalise_foreign(edit.typed):
                targets.append(occ)
        if edit.value == "keep_last":
            targets = targets[:-1]
        for occ in sorted(targets, key=lambda o: o.start, reverse=True):
            text = remove_span(text, occ.start, occ.end)
        if edit.typed is not None and not targets:
            for word in sorted(parsed.stray, key=lambda w: w.start, reverse=True):
                if word.text == edit.typed:
                    # a "\\" that ends the text is a word of no typed characters (raw ""): the backslash goes
                    end = word.end if word.end > word.start else min(word.start + 1, len(text))
                    text = remove_span(text, word.start, end)
        return drop_empty_continuations(text)
    if edit.kind == "rename":
        targets = [o for o in parsed.occurrences
                   if edit.typed is not None and normalise_foreign(o.typed) == normalise_foreign(edit.typed)]
        for occ in sorted(targets, key=lambda o: o.start, reverse=True):
            if edit.value is not None:
                new = f"{edit.option} {_quote(edit.value)}" if edit.value != "" else str(edit.option)
                text = splice(text, occ.start, occ.end, new)
            else:
                word = occ.words[0]
                if occ.lookup.explicit is not None:
                    new = f"{edit.option}={_quote(occ.lookup.explicit)}"
                else:
                    new = str(edit.option)
                text = splice(text, word.start, word.end, new)
        return text
    if edit.kind == "set_env":
        for env in reversed(cmd.env):
            if env.name == edit.option:
                word_start = env.end - len(f"{env.name}={env.value}")
                return splice(text, max(word_start, env.start), env.end, f"{edit.option}={_quote(edit.value)}")
        return splice(text, cmd.launcher_start, cmd.launcher_start, f"{edit.option}={_quote(edit.value)} ")
    if edit.kind == "unset_env":
        for env in sorted((e for e in cmd.env if e.name == edit.option), key=lambda e: e.start, reverse=True):
            if env.source == "export":
                line_start = text.rfind("\n", 0, env.start) + 1
                line_end = text.find("\n", env.end)
                line_end = len(text) if line_end < 0 else line_end + 1
                line = text[line_start:line_end]
                rest = re.sub(rf"\b{re.escape(env.name)}=\S*", "", line[env.start - line_start:])
                if rest.replace("export", "").strip() == "":
                    text = text[:line_start] + text[line_end:]
                else:
                    text = text[:line_start] + line[: env.start - line_start] + rest + text[line_end:]
            else:
                text = remove_span(text, env.start, env.end)
        return drop_empty_continuations(text)
    raise ValueError(f"unknown edit kind {edit.kind!r}")


def _batch_renames(text: str, edits: list[Edit], release: str) -> str | None:
    """Apply a run of ``rename`` edits (each naming a different typed option) on one parse; None when a batch is
    not possible (then the edits are applied one by one)."""
    cmd = parse_command(text)
    if not cmd.found:
        return None
    parsed = parse_arguments(cmd.args, load_table(release))
    splices: list[tuple[int, int, str]] = []
    for edit in edits:
        key = normalise_foreign(edit.typed or "")
        for occ in parsed.occurrences:
            if normalise_foreign(occ.typed) != key:
                continue
            if edit.value is not None:
                new = f"{edit.option} {_quote(edit.value)}" if edit.value != "" else str(edit.option)
                splices.append((occ.start, occ.end, new))
            elif occ.lookup.explicit is not None:
                splices.append((occ.words[0].start, occ.words[0].end, f"{edit.option}={_quote(occ.lookup.explicit)}"))
            else:
                splices.append((occ.words[0].start, occ.words[0].end, str(edit.option)))
    splices.sort()
    for (_s1, e1, _), (s2, _, _) in zip(splices, splices[1:], strict=False):
        if s2 < e1:
            return None
    for start, end, new in reversed(splices):
        text = splice(text, start, end, new)
    return text


def apply_edits(text: str, edits: Iterable[Edit], release: str) -> str:
    """Apply ``edits`` in order to ``text`` using the flag table of ``release``; return the new text, its command
    ending whole (:func:`close_command`). Runs of renames are applied on a single parse (the builder re-validates
    on every keystroke)."""
    pending: list[Edit] = []
    for edit in list(edits) + [Edit("end")]:
        if edit.kind == "rename":
            pending.append(edit)
            continue
        if pending:
            batched = _batch_renames(text, pending, release) if len(pending) > 1 else None
            if batched is None:
                for item in pending:
                    text = _apply_one(text, item, release)
            else:
                text = batched
            pending = []
        if edit.kind != "end":
            text = _apply_one(text, edit, release)
    return close_command(text)
