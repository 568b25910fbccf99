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

from packaging.version import InvalidVersion, Version

#: Releases whose flag tables are shipped (``data/flags_<v>.json``), ascending.
FLAG_TABLE_RELEASES: tuple[str, ...] = (
    "0.4.1", "0.4.3", "0.4.5", "0.4.7", "0.4.10", "0.5.1", "0.5.5", "0.5.8", "0.5.9", "0.5.10", "0.5.11",
    "0.5.12", "0.5.23",
)

#: The newest release specdash knows: the flag tables and rules were last checked against its ``server_args.py``;
#: used when no version is given. A newer version gets the newest profile plus :func:`version_notice`.
CURRENT_RELEASE = "0.5.23"


@functools.lru_cache(maxsize=1024)
def parse_version(text: str) -> Version:
    """The one SGLang version type of specdash: a :class:`packaging.version.Version` (PEP 440 ordering).

    ``"0.5.3.post3"`` > ``"0.5.3"``; ``"0.5.24rc0"`` > ``"0.5.23"`` and < ``"0.5.24"``; ``"0.5.24.dev3+gabc"`` (a
    source build) < ``"0.5.24rc0"``; a leading ``v`` is accepted. Raises ValueError (one line) for text that is not a
    version, e.g. ``"unknown"`` (what a source checkout without tags reports as ``sglang.__version__``).
    """
    cleaned = text.strip()
    if cleaned[:1] in ("v", "V"):
        cleaned = cleaned[1:]
    if not re.match(r"^\d+\.\d+", cleaned):
        raise ValueError(f"not an SGLang version: {text[:80]!r} (expected e.g. 0.5.9 or 0.4.10.post2)")
    try:
        return Version(cleaned)
    except InvalidVersion:
        raise ValueError(f"not an SGLang version: {text[:80]!r} (expected e.g. 0.5.9 or 0.4.10.post2)") from None


def is_version(text: str | None) -> bool:
    """True when :func:`parse_version` reads ``text``."""
    if not text:
        return False
    try:
        parse_version(text)
    except ValueError:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class Profile:
    """A version profile: ``name`` (e.g. ``"0.5.5"``), ``releases`` (human range), ``version`` (the version asked
    for, or the profile's representative release), ``flag_release`` (which flag table applies) and ``requested``
    (the text asked for when it was not a version, e.g. ``"unknown"``, and the newest rules were used instead)."""

    name: str
    releases: str
    version: str
    flag_release: str

    requested: str | None = None

    @property
    def key(self) -> Version:
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
    separately. Raises ValueError for text that is not a version (see :func:`profile_or_newest` for a caller that
    must not fail, e.g. a version read from a host).
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


def profile_or_newest(version: str | None) -> Profile:
    """Like :func:`profile_for`, but text that is not a version (``"unknown"``, ``""``, garbage from a probe) gives
    the newest profile with :attr:`Profile.requested` set, so :func:`version_notice` can say so. Never raises."""
    if version is None or is_version(version):
        return profile_for(version)
    newest = profile_for(None)
    return dataclasses.replace(newest, requested=version.strip()[:80])


def newer_than_known(version: str | None) -> bool:
    """True when ``version`` is a release newer than :data:`CURRENT_RELEASE`, the newest release whose
    ``server_args.py`` the rules and flag tables were checked against (None -> False: the newest known rules).

    Compares MAJOR.MINOR.PATCH only: ``0.5.23.post1`` is a rebuild of 0.5.23, not a newer release; ``0.5.24rc0`` is
    newer. Raises ValueError for text that is not a version (see :func:`parse_version`)."""
    if version is None:
        return False
    return _release3(parse_version(version)) > _release3(parse_version(CURRENT_RELEASE))


def _release3(version: Version) -> tuple[int, int, int]:
    """MAJOR.MINOR.PATCH of ``version`` (missing parts are 0)."""
    parts = (tuple(version.release) + (0, 0, 0))[:3]
    return (parts[0], parts[1], parts[2])


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


def profile_notice(profile: Profile) -> str | None:
    """The notice for a profile from :func:`profile_or_newest`: for a version that could not be read
    (``Profile.requested``) one line saying so and which rules apply, else :func:`version_notice` of its version."""
    if profile.requested is not None:
        shown = "".join(ch if ch.isprintable() else "?" for ch in profile.requested) or "(empty)"
        return (f"SGLang version {shown!r} is not a release number specdash can read: the newest rules are applied "
                f"(profile {profile.name}, checked against {CURRENT_RELEASE}); pass --sglang-version to choose")
    return version_notice(profile.version)


def has_speculative_decoding(version: str | None) -> bool:
    """False for releases before 0.4.0, which had no speculative decoding at all (text that is not a version: True,
    the newest rules apply)."""
    return version is None or not is_version(version) or parse_version(version) >= Version("0.4.0.dev0")


def version_command(python: str = "python3") -> str:
    """The POSIX shell command that prints the SGLang version importable by ``python`` on a host (the config's
    ``python:`` value: a path or a name, quoted as one word, never run through the shell as text)."""
    return f"{shlex.quote(python)} -c 'import sglang; print(sglang.__version__)'"
