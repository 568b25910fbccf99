"""Match a launch command's words against one release's flag table, the way SGLang's argparse parser does.

``parse_arguments(words, table)`` walks the words like ``ArgumentParser.parse_args`` (CPython 3.11): each option
word is looked up (exact, ``--opt=value``, unique prefix, ambiguous, unknown); a value-taking option consumes the
next word unless that word is option-like (then argparse fails with ``expected one argument``); ``store_true``
flags take no value (``--flag=x`` fails with ``ignored explicit argument``); values are converted with the flag's
``type`` and checked against ``choices``; words nobody consumes are "unrecognized arguments". Repeated flags are
allowed by argparse (the last value wins); they are recorded so the rules can say so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.sglang.command import Word
from specdash.sglang.flags import FlagSpec, FlagTable, Lookup


@dataclasses.dataclass
class Occurrence:
    """One option as typed: ``typed`` (the option text before any ``=``), ``lookup`` (how argparse classifies it),
    ``words`` (the option word and the value words it consumed), ``values`` (raw value strings), ``value``
    (converted; True for store_true), ``error`` (argparse's message when this occurrence makes it fail, else
    None)."""

    typed: str
    lookup: Lookup
    words: list[Word]
    values: list[str]
    value: Any = None
    error: str | None = None

    @property
    def spec(self) -> FlagSpec | None:
        return self.lookup.spec

    @property
    def start(self) -> int:
        return self.words[0].start

    @property
    def end(self) -> int:
        return self.words[-1].end

    @property
    def as_typed(self) -> str:
        """The occurrence as the user typed it, e.g. ``--mem-frac 0.8``."""
        return " ".join(w.raw for w in self.words)


@dataclasses.dataclass
class ParsedArguments:
    """Result of :func:`parse_arguments`.

    ``occurrences``: every option in order; ``typed``: ``{dest: value}`` for the options the user gave (last
    occurrence wins, as in argparse); ``by_dest``: ``{dest: [occurrences]}``; ``unknown``: occurrences argparse
    does not recognise; ``stray``: value-like words nobody consumed; ``errors``: occurrences with an argparse
    error (ambiguous, bad value, missing value); ``unresolved``: ``{dest: occurrence}`` whose value depends on a
    shell variable the pasted text does not set (its ``value`` is an :class:`Unresolved`); ``unresolved_words``:
    words nobody could classify because they are unresolved (``$EXTRA_ARGS``, ``--$FLAG``).
    """

    occurrences: list[Occurrence] = dataclasses.field(default_factory=list)
    typed: dict[str, Any] = dataclasses.field(default_factory=dict)
    by_dest: dict[str, list[Occurrence]] = dataclasses.field(default_factory=dict)
    unknown: list[Occurrence] = dataclasses.field(default_factory=list)
    stray: list[Word] = dataclasses.field(default_factory=list)
    errors: list[Occurrence] = dataclasses.field(default_factory=list)
    unresolved: dict[str, Occurrence] = dataclasses.field(default_factory=dict)
    unresolved_words: list[Word] = dataclasses.field(default_factory=list)

    def last(self, dest: str) -> Occurrence | None:
        """The occurrence whose value argparse keeps for ``dest`` (the last one), or None."""
        occ = self.by_dest.get(dest)
        return occ[-1] if occ else None


class Unresolved(str):
    """A flag value the pasted text does not decide (``${tp}`` with ``tp`` never set): the text as typed, with
    ``names`` (what it depends on). Its value is unknown: never converted, compared or judged."""

    names: tuple[str, ...]

    def __new__(cls, typed: str, names: tuple[str, ...]) -> Unresolved:
        obj = super().__new__(cls, typed)
        obj.names = names
        return obj


def _convert(spec: FlagSpec, values: list[str]) -> Any:
    converted = [spec.convert(v) for v in values]
    if spec.choices is not None:
        for v in converted:
            if v not in spec.choices:
                choices = ", ".join(repr(c) for c in spec.choices)
                raise ValueError(f"invalid choice: {v!r} (choose from {choices})")
    if spec.nargs in ("+", "*") or isinstance(spec.nargs, int) and spec.nargs > 1:
        return converted
    return converted[0] if converted else spec.default


def parse_arguments(words: list[Word], table: FlagTable) -> ParsedArguments:
    """Parse argument ``words`` against ``table``; never raises (errors are recorded on the occurrences)."""
    result = ParsedArguments()
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        lookup = table.lookup(word.text)
        if lookup.kind == "positional":
            (result.unresolved_words if word.unresolved else result.stray).append(word)
            i += 1
            continue
        typed = word.text.split("=", 1)[0] if word.text.startswith("--") else word.text
        occ = Occurrence(typed=typed, lookup=lookup, words=[word], values=[])
        i += 1
        if lookup.kind in ("unknown", "ambiguous") and word.unresolved:
            result.unresolved_words.append(word)
            i += 1
            continue
        if lookup.kind in ("unknown", "ambiguous"):
            if lookup.explicit is not None:
                occ.values.append(lookup.explicit)
            while i < n and not table.is_option_like(words[i].text):
                occ.words.append(words[i])
                occ.values.append(words[i].text)
                i += 1
            if lookup.kind == "ambiguous":
                occ.error = f"ambiguous option: {typed} could match {', '.join(lookup.matches)}"
                result.errors.append(occ)
            else:
                result.unknown.append(occ)
            result.occurrences.append(occ)
            continue
        spec = lookup.spec
        assert spec is not None
        if not spec.takes_value:
            if lookup.explicit is not None:
                occ.error = f"argument {'/'.join(spec.options)}: ignored explicit argument {lookup.explicit!r}"
            if spec.action == "BooleanOptionalAction":
                occ.value = not (lookup.option or "").startswith("--no-")
            else:
                occ.value = False if spec.action == "store_false" else True
        else:
            if lookup.explicit is not None:
                occ.values.append(lookup.explicit)
            elif spec.nargs is None or spec.nargs == "?":
                if i < n and not table.is_option_like(words[i].text):
                    occ.words.append(words[i])
                    occ.values.append(words[i].text)
                    i += 1
                elif spec.nargs is None:
                    occ.error = f"argument {'/'.join(spec.options)}: expected one argument"
            else:
                while i < n and not table.is_option_like(words[i].text):
                    occ.words.append(words[i])
                    occ.values.append(words[i].text)
                    i += 1
                if spec.nargs == "+" and not occ.values:
                    occ.error = f"argument {'/'.join(spec.options)}: expected at least one argument"
            unresolved = [name for w in occ.words for name in w.unresolved]
            if occ.error is None and unresolved:
                occ.value = Unresolved(" ".join(w.raw for w in occ.words[1:]) or occ.words[0].raw.split("=", 1)[-1],
                                       tuple(dict.fromkeys(unresolved)))
                result.unresolved[spec.dest] = occ
            elif occ.error is None:
                try:
                    occ.value = _convert(spec, occ.values) if occ.values else (
                        spec.default if spec.nargs == "?" else [])
                except ValueError as exc:
                    occ.error = f"argument {'/'.join(spec.options)}: {exc}"
        result.occurrences.append(occ)
        if occ.error:
            result.errors.append(occ)
            continue
        result.by_dest.setdefault(spec.dest, []).append(occ)
        result.typed[spec.dest] = occ.value
    return result
