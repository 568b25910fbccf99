"""SGLang version profiles: which flag table and which rule set a version string selects.

A *profile* groups the SGLang releases whose speculative-decoding argument handling is the same. Each profile names
the release whose ``server_args.py`` (PyPI wheel) the rules were transcribed from, and each release range uses the
flag table of the nearest release at or below it (``specdash/sglang/data/flags_<release>.json``).

Profiles (source: the PyPI wheel of each named release, ``python/sglang/srt/server_args.py`` and, from 0.5.16,
``sglang/srt/arg_groups/speculative_hook.py``):

======== ============== =====================================================================================
profile  releases       what changes for speculative decoding
======== ============== =====================================================================================
0.4.1    0.4.0-0.4.2    EAGLE only; defaults 5/8/64; topk choices 1,2,4,8; radix cache, chunked prefill and
                        overlap scheduler switched off
0.4.3    0.4.3-0.4.4    NEXTN -> EAGLE; defaults 5/4/8; max_running_requests 32; overlap off
0.4.5    0.4.5-0.4.6    defaults None -> auto-choose (5,4,8) or bare AssertionError; max_running_requests 48;
                        page_size > 1 forces topk 1
0.4.7    0.4.7-0.4.10   topk 1 forces num_draft_tokens = num_steps + 1; mixed chunk off; DeepSeek (3,1,4)
0.5.0    0.5.0-0.5.4    trtllm_mha rejects topk > 1; GptOss (3,1,4)
0.5.5    0.5.5-0.5.10   STANDALONE, NGRAM; SGLANG_ENABLE_SPEC_V2 opt-in overlap (topk > 1 -> ValueError);
                        topk > 1 with page_size > 1 -> ValueError unless flashinfer/fa3; "other" archs (3,1,4)
                        from 0.5.8
0.5.11   0.5.11-0.5.15  spec v2 (overlap) on by default; topk > 1 silently falls back to spec v1
0.5.16   0.5.16-        current: rules in arg_groups/speculative_hook.py; algorithm free string, upper-cased;
                        SGLANG_ENABLE_SPEC_V2 removed; overlap stays on unless --disable-overlap-schedule or CPU
======== ============== =====================================================================================
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex

#: Releases whose flag tables are shipped (``data/flags_<v>.json``), ascending.
FLAG_TABLE_RELEASES: tuple[str, ...] = (
    "0.4.1", "0.4.3", "0.4.5", "0.4.7", "0.4.10", "0.5.1", "0.5.5", "0.5.8", "0.5.9", "0.5.10", "0.5.11",
    "0.5.12", "0.5.23",
)

#: The newest release specdash knows: the flag tables and rules were last checked against its ``server_args.py``;
#: used when no version is given. A newer version gets the newest profile plus :func:`version_notice`.
CURRENT_RELEASE = "0.5.23"


@functools.lru_cache(maxsize=1024)
def parse_version(text: str) -> tuple[int, int, int, int]:
    """``"0.5.3.post3"`` -> ``(0, 5, 3, 3)``; ``"0.5.0rc0"`` -> ``(0, 5, 0, -1)`` (pre-releases sort first).

    Raises ValueError when ``text`` does not start with ``MAJOR.MINOR``.
    """
    match = re.match(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?(rc\d+|a\d+|b\d+|\.dev\d+)?", text)
    if not match:
        raise ValueError(f"not an SGLang version: {text!r} (expected e.g. 0.5.9 or 0.4.10.post2)")
    major, minor = int(match.group(1)), int(match.group(2))
    patch = int(match.group(3) or 0)
    post = int(match.group(5) or match.group(4) or 0)
    if match.group(6):
        post = -1
    return (major, minor, patch, post)


@dataclasses.dataclass(frozen=True)
class Profile:
    """A version profile: ``name`` (e.g. ``"0.5.5"``), ``releases`` (human range), ``version`` (the version asked
    for, or the profile's representative release) and ``flag_release`` (which flag table applies)."""

    name: str
    releases: str
    version: str
    flag_release: str

    @property
    def key(self) -> tuple[int, int, int, int]:
        """The parsed :attr:`version`, for range checks in the rules."""
        return parse_version(self.version)

    def at_least(self, version: str) -> bool:
        """True when this profile's version is ``>= version``."""
        return self.key >= parse_version(version)


#: (profile name, first release, human range). Ascending.
_PROFILES: tuple[tuple[str, str, str], ...] = (
    ("0.4.1", "0.4.0", "0.4.0-0.4.2"),
    ("0.4.3", "0.4.3", "0.4.3-0.4.4"),
    ("0.4.5", "0.4.5", "0.4.5-0.4.6"),
    ("0.4.7", "0.4.7", "0.4.7-0.4.10"),
    ("0.5.0", "0.5.0rc0", "0.5.0-0.5.4"),
    ("0.5.5", "0.5.5", "0.5.5-0.5.10"),
    ("0.5.11", "0.5.11", "0.5.11-0.5.15"),
    ("0.5.16", "0.5.16", "0.5.16 and later (current)"),
)

#: Profile names, oldest first (for ``--sglang-version`` help and the builder's version picker).
PROFILE_NAMES: tuple[str, ...] = tuple(p[0] for p in _PROFILES)


def profile_for(version: str | None) -> Profile:
    """Return the :class:`Profile` for an SGLang version string (``None`` -> the current release).

    Versions older than 0.4.0 (no speculative decoding) map to the 0.4.1 profile; the caller reports that
    separately. Raises ValueError for text that is not a version.
    """
    text = (version or CURRENT_RELEASE).strip()
    key = parse_version(text)
    chosen = _PROFILES[0]
    for entry in _PROFILES:
        if key >= parse_version(entry[1]):
            chosen = entry
    flag_release = FLAG_TABLE_RELEASES[0]
    for release in FLAG_TABLE_RELEASES:
        if key >= parse_version(release):
            flag_release = release
    # Releases between 0.5.16 and 0.5.22 declare their flags as msgspec fields; the 0.5.23 table is the closest
    # one extracted from a real install (dump_parser.py), so use it for that whole range.
    if key >= parse_version("0.5.13") and flag_release == "0.5.12":
        flag_release = "0.5.12" if key < parse_version("0.5.16") else "0.5.23"
    return Profile(name=chosen[0], releases=chosen[2], version=text, flag_release=flag_release)


def newer_than_known(version: str | None) -> bool:
    """True when ``version`` is a release newer than :data:`CURRENT_RELEASE`, the newest release whose
    ``server_args.py`` the rules and flag tables were checked against (None -> False: the newest known rules).

    Compares MAJOR.MINOR.PATCH only: ``0.5.23.post1`` is a rebuild of 0.5.23, not a newer release; ``0.5.24rc0`` is
    newer. Raises ValueError for text that is not a version (see :func:`parse_version`)."""
    if version is None:
        return False
    return parse_version(version)[:3] > parse_version(CURRENT_RELEASE)[:3]


def version_notice(version: str | None) -> str | None:
    """One line for a ``version`` newer than every release the rules were checked against, naming that release and
    the profile applied as the best guess, e.g. ``"SGLang 9.9 is newer than 0.5.23, the newest release specdash's
    rules were checked against: the 0.5.16 rules are applied as a best guess (flags or rules added since are not
    known)"``; None for a known or older version (and for None). Raises ValueError for text that is not a version."""
    if not newer_than_known(version):
        return None
    profile = profile_for(version)
    return (f"SGLang {profile.version} is newer than {CURRENT_RELEASE}, the newest release specdash's rules were "
            f"checked against: the {profile.name} rules are applied as a best guess (flags or rules added since "
            "are not known)")


def has_speculative_decoding(version: str | None) -> bool:
    """False for releases before 0.4.0, which had no speculative decoding at all."""
    return version is None or parse_version(version) >= (0, 4, 0, 0)


def version_command(python: str = "python3") -> str:
    """The POSIX shell command that prints the SGLang version importable by ``python`` on a host (the config's
    ``python:`` value: a path or a name, quoted as one word, never run through the shell as text)."""
    return f"{shlex.quote(python)} -c 'import sglang; print(sglang.__version__)'"
