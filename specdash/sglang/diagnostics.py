"""Diagnostics and fixes: what the validator tells the user, and the concrete edit that resolves it.

A :class:`Diagnostic` has a ``severity``:

- ``error``    SGLang will refuse the command or crash (``stage`` says when: ``argparse``, ``server_args`` while
               resolving arguments, ``check_server_args`` in the check the launch runs right after resolving,
               ``startup`` later in the launch, ``runtime`` on the first requests);
- ``override`` SGLang will silently use a different value than the one typed (``from_value`` -> ``to_value``);
- ``warning``  legal but harmful;
- ``info``     auto-chosen values and other facts worth seeing.

A :class:`Fix` is a list of :class:`Edit` operations on the command text; ``Fix.apply(text)`` performs them on the
user's own text (spacing, continuations and other flags are kept).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.severity import SEVERITIES as _ALL
from specdash.severity import severity_rank

#: The validator's severities (:mod:`specdash.severity` without ``success``), most severe first.
SEVERITIES = tuple(s for s in _ALL if s != "success")
SEVERITY_RANK = {s: severity_rank(s) for s in SEVERITIES}


@dataclasses.dataclass(frozen=True)
class Edit:
    """One edit of a command.

    ``kind``: ``set`` (give flag ``option`` the value ``value``; ``value`` None for a switch; replaces the value of
    the last occurrence of ``dest`` or appends ``option value``), ``remove`` (every occurrence of ``dest``, or of
    the typed option ``typed`` when ``dest`` is None), ``rename`` (occurrences typed as ``typed`` become
    ``option``, with ``value`` replacing their value words when not None), ``set_env`` / ``unset_env`` (variable
    ``option`` = ``value``), ``replace_all`` (the whole text becomes ``value``).
    """

    kind: str
    option: str | None = None
    value: Any = None
    dest: str | None = None
    typed: str | None = None


@dataclasses.dataclass(frozen=True)
class Fix:
    """A suggested fix: ``description`` (plain words, e.g. ``add --speculative-num-steps 15``), ``edits`` and the
    ``flag_release`` whose flag table is used to find the options in the text. A fix about something other than
    the command (a draft's config.json, from the pairing check) has no ``edits``: :attr:`edits_command` is
    False and :meth:`apply` returns the text unchanged."""

    description: str
    edits: tuple[Edit, ...]
    flag_release: str

    @property
    def edits_command(self) -> bool:
        """True when applying the fix changes the launch command."""
        return bool(self.edits)

    def apply(self, command_text: str) -> str:
        """Return ``command_text`` with the edits applied (see :mod:`specdash.sglang.fixes`)."""
        from specdash.sglang.fixes import apply_edits

        return apply_edits(command_text, self.edits, self.flag_release)

    def __str__(self) -> str:
        return self.description


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One finding. ``code`` is stable (e.g. ``steps-missing``), ``flags`` the option names concerned (canonical
    spellings), ``message`` plain words (for errors: the exception SGLang raises and its message), ``fix`` a
    :class:`Fix` or None; ``stage`` where SGLang fails (errors only); ``exception`` its type name;
    ``from_value``/``to_value`` for overrides; ``field`` the ServerArgs field an override or info is about;
    ``hardware_dependent`` True when the outcome depends on the GPU host (e.g. the attention backend SGLang picks
    from the GPU): the diagnostic then names the condition instead of predicting one outcome; ``link``: the public
    SGLang issue or PR the finding comes from (known issues), None otherwise."""

    severity: str
    code: str
    flags: tuple[str, ...]
    message: str
    fix: Fix | None = None
    stage: str | None = None
    exception: str | None = None
    field: str | None = None
    from_value: Any = None
    to_value: Any = None
    hardware_dependent: bool = False
    link: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"severity", "code", "flags", "message", "fix"}`` (fix: its description or null), plus ``stage`` and
        ``exception`` for errors, ``field``/``from``/``to`` for overrides when known, and ``"hardware_dependent": true``
        when the outcome depends on the GPU host, and ``link`` when the finding comes from an SGLang issue or PR."""
        out: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "flags": list(self.flags),
            "message": self.message,
            "fix": self.fix.description if self.fix else None,
        }
        if self.stage:
            out["stage"] = self.stage
        if self.exception:
            out["exception"] = self.exception
        if self.field:
            out["field"] = self.field
        if self.severity == "override":
            out["from"] = self.from_value
            out["to"] = self.to_value
        if self.hardware_dependent:
            out["hardware_dependent"] = True
        if self.link:
            out["link"] = self.link
        return out
