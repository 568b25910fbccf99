"""Which target boundaries SGLang captures for EAGLE-3, per architecture family and SGLang version.

Boundaries: hidden state after b decoder blocks (``docs/pairing.md``). SGLang captures at the *input* of decoder
layer i when i is in ``layers_to_capture`` (llama.py ``LlamaModel.forward``), so ``layers_to_capture`` *are*
boundaries; what differs is how the draft's ids become ``layers_to_capture``:

=============  ==========================================  ===================================================
family         ids x ⇒ boundaries                           source
=============  ==========================================  ===================================================
plus_one       x + 1 (all versions)                         llama.py ``set_eagle3_layers_to_capture``
first_id       < 0.5.13: x + 1; ≥ 0.5.13: x + 1 if x[0]==1  deepseek_v2.py, PR #25454 (wheel 0.5.12.post1 lacks
               else x                                       it, 0.5.13 has it)
gpt_oss        < 0.5.17: x + 1, N unreachable;              gpt_oss.py, PR #32334 (wheel 0.5.16 lacks it, 0.5.17
               ≥ 0.5.17: x if max(x)==N else x + 1;         has it); the forward captures the final boundary
               N capturable                                 before the norm
plus_one_all   default shifted too: [3, N//2+1, N−2]        minimax_m3_vl.py (0.5.23)
=============  ==========================================  ===================================================

Default (no ids): [2, N//2, N−3] for every family but ``plus_one_all``.
Boundary 0 (the embedding output) is not capturable in the llama/deepseek snapshots read (the residual is still
None at layer 0), boundary N only with the gpt_oss ≥ 0.5.17 code.
"""

from __future__ import annotations

import dataclasses

from packaging.version import Version

from specdash.sglang import versions

#: The newest SGLang whose model files these rules were read from (the sglang 0.5.23 wheel).
NEWEST_KNOWN_VERSION = "0.5.23"
#: First release with the DeepSeek first-id rule (PR #25454); its pre-releases count as before it.
FIRST_ID_RULE_SINCE = Version("0.5.13")
#: First release with the gpt-oss boundary rule and final-boundary capture (PR #32334).
GPT_OSS_BOUNDARY_RULE_SINCE = Version("0.5.17")

#: The same version type and parser as the launch rules (PEP 440 ordering: ``0.5.18rc1`` is newer than ``0.5.17``).
parse_version = versions.parse_version


@dataclasses.dataclass(frozen=True)
class CaptureRule:
    """The id → boundary rule of one architecture family on one SGLang version.

    ``family``: see module doc. ``version``: the version label the rule is for. ``final_boundary_capturable``:
    whether boundary N can be captured. ``first_id_rule``/``boundary_rule``: which conditional shift applies.
    """

    family: str
    version: str
    first_id_rule: bool = False
    boundary_rule: bool = False

    @property
    def final_boundary_capturable(self) -> bool:
        return self.boundary_rule

    def default_boundaries(self, num_layers: int) -> list[int]:
        """Boundaries SGLang captures when the draft declares no ids."""
        base = [2, num_layers // 2, num_layers - 3]
        return [b + 1 for b in base] if self.family == "plus_one_all" else base

    def boundaries_for(self, ids: list[int] | None, num_layers: int) -> list[int]:
        """``layers_to_capture`` for the declared ``ids`` (None ⇒ default), in the order SGLang stores them."""
        if ids is None:
            return self.default_boundaries(num_layers)
        if self.first_id_rule:
            return [v + 1 for v in ids] if ids and ids[0] == 1 else list(ids)
        if self.boundary_rule:
            return list(ids) if ids and max(ids) == num_layers else [v + 1 for v in ids]
        return [v + 1 for v in ids]

    def capturable_range(self, num_layers: int) -> tuple[int, int]:
        """Inclusive (low, high) boundaries this build can capture: (1, N−1), or (0, N) with the gpt-oss rule
        (its forward captures the start boundary and the final boundary explicitly)."""
        return (0, num_layers) if self.boundary_rule else (1, num_layers - 1)

    def ids_for(self, boundaries: list[int], num_layers: int) -> list[int] | None:
        """Ids to write into ``eagle_config`` so that this rule captures ``boundaries``; prefers the trainer
        ("output of block k") convention ``b − 1``, which every family reads as intended when the first id is 1.
        None when no id list yields them or a boundary lies outside :meth:`capturable_range`."""
        lo, hi = self.capturable_range(num_layers)
        if any(not lo <= b <= hi for b in boundaries):
            return None
        for candidate in ([b - 1 for b in boundaries], list(boundaries)):
            if any(v < 0 for v in candidate):
                continue
            if self.boundaries_for(candidate, num_layers) == list(boundaries):
                return candidate
        return None


def rule_for(family: str, version: str | None) -> CaptureRule:
    """The :class:`CaptureRule` of ``family`` on SGLang ``version`` (None ⇒ :data:`NEWEST_KNOWN_VERSION`).

    Versions newer than the newest known get the newest known rules. Raises ValueError for an unparsable version.
    """
    label = version or NEWEST_KNOWN_VERSION
    parsed = parse_version(label)
    if family == "first_id":
        return CaptureRule(family, label, first_id_rule=parsed >= FIRST_ID_RULE_SINCE)
    if family == "gpt_oss":
        return CaptureRule(family, label, boundary_rule=parsed >= GPT_OSS_BOUNDARY_RULE_SINCE)
    return CaptureRule(family, label)


def is_newer_than_known(version: str) -> bool:
    """True when ``version`` is newer than the rules were read from."""
    return versions.newer_than_known(version)


def representative_versions() -> list[str]:
    """One version per rule era, oldest first: before PR #25454, before PR #32334, newest known."""
    return [era[2] for era in RULE_ERAS]


#: Rule eras as (first version, last version, a representative version); "" = open end.
RULE_ERAS: tuple[tuple[str, str, str], ...] = (
    ("", "0.5.12.post1", "0.5.12"),
    ("0.5.13", "0.5.16", "0.5.16"),
    ("0.5.17", "", NEWEST_KNOWN_VERSION),
)


def era_label(first: int, last: int) -> str:
    """Text for the eras ``RULE_ERAS[first..last]``: ``up to 0.5.12.post1``, ``0.5.13-0.5.16``, ``0.5.17 and later``."""
    start, end = RULE_ERAS[first][0], RULE_ERAS[last][1]
    if not start and not end:
        return "every version"
    if not start:
        return f"up to {end}"
    if not end:
        return f"{start} and later"
    return f"{start}-{end}"
