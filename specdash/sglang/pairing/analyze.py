"""``analyze_pairing``: will SGLang feed the draft the hidden states it was trained on?"""

from __future__ import annotations

from specdash.sglang.diagnostics import Diagnostic
from specdash.sglang.pairing.architectures import capture_family
from specdash.sglang.pairing.checks import ALL_CHECKS, PairContext
from specdash.sglang.pairing.configs import draft_facts, target_facts
from specdash.sglang.pairing.conventions import describe_boundaries, guess_convention
from specdash.sglang.pairing.layer_map import build_layer_map
from specdash.sglang.pairing.layer_rules import (
    NEWEST_KNOWN_VERSION,
    era_label,
    is_newer_than_known,
    parse_version,
    representative_versions,
    rule_for,
)
from specdash.sglang.pairing.report import PairingReport, pairing_diagnostic, sort_diagnostics
from specdash.sglang.pairing.safetensors_header import draft_tensors

#: Algorithms SGLang knows (``--speculative-algorithm`` choices; NEXTN runs as EAGLE).
KNOWN_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK")


def analyze_pairing(
    target_config: dict,
    draft_config: dict,
    *,
    algorithm: str = "EAGLE3",
    sglang_version: str | None = None,
    draft_safetensors_header: dict | None = None,
    weight_index: dict | None = None,
    tokenizer_fingerprints: tuple[str, str] | None = None,
    probe_result: dict | None = None,
) -> PairingReport:
    """Check a draft against its target before launch.

    ``target_config``/``draft_config``: the parsed ``config.json`` dicts (multimodal ``text_config`` handled).
    ``algorithm``: SGLang ``speculative_algorithm`` (case-insensitive). ``sglang_version``: e.g. ``"0.5.23"``;
    None ⇒ the newest known rules (0.5.23) plus a warning when the answer depends on the version.
    ``draft_safetensors_header``: the draft's safetensors header dict (see :func:`read_safetensors_header`).
    ``weight_index``: a ``*.safetensors.index.json`` dict (tensor names only; for NEXTN the target's).
    ``tokenizer_fingerprints``: (target, draft) digests of the tokenizer vocabularies (STANDALONE).
    ``probe_result``: the dict :func:`specdash.sglang.pairing.probe.parse_probe_output` returns; when ``ok`` its
    captured layers are authoritative (``source == "probe"``).

    Returns a :class:`PairingReport`. Raises ValueError for an empty algorithm or an unparsable version.
    Rules: SGLang 0.5.23 model files (see layer_rules) and ``docs/pairing.md``.
    """
    algo = (algorithm or "").strip().upper()
    if not algo:
        raise ValueError("algorithm is empty")
    if sglang_version is not None:
        parse_version(sglang_version)
    target = target_facts(target_config)
    draft = draft_facts(draft_config)
    tensors = draft_tensors(draft_safetensors_header, weight_index if algo != "NEXTN" else None)
    family = capture_family(target.architecture, target.text_model_type)
    extra: list[Diagnostic] = []

    probe_ok = bool(probe_result and probe_result.get("ok"))
    if probe_result and not probe_ok:
        extra.append(
            pairing_diagnostic(
                "info", "probe-failed",
                f"The SGLang probe did not answer ({probe_result.get('error') or 'no result'}); "
                "used the version rules.",
            )
        )
    version_label = (
        str(probe_result.get("sglang_version") or sglang_version or NEWEST_KNOWN_VERSION)
        if probe_ok and probe_result
        else (sglang_version or NEWEST_KNOWN_VERSION)
    )
    rule_version = _rule_version(version_label)
    rule = rule_for(family, rule_version) if family else None
    n = target.num_layers
    eagle3 = algo == "EAGLE3"
    captured: list[int] = []
    capturable = rule.capturable_range(n) if rule and n else None
    if probe_ok and probe_result is not None:
        source = "probe"
        if eagle3 and draft.use_aux_hidden_state:
            captured = [int(b) for b in probe_result.get("captured") or []]
        if n and probe_result.get("final_boundary_capturable") is not None:
            capturable = (0, n) if probe_result["final_boundary_capturable"] else (1, n - 1)
        if rule and n and eagle3 and draft.use_aux_hidden_state:
            predicted = rule.boundaries_for(draft.nested_ids, n)
            if predicted != captured:
                extra.append(
                    pairing_diagnostic(
                        "warning", "probe-rules-disagree",
                        f"The installed SGLang ({version_label}) captures {captured}; "
                        "specdash's rules for that version "
                        f"predicted {predicted}. The probe's answer is used.",
                        "report this to specdash (the rules need an update)",
                    )
                )
    else:
        source = f"rules:{version_label}"
        if eagle3 and rule and n and draft.use_aux_hidden_state:
            captured = rule.boundaries_for(draft.nested_ids, n)

    guess = None
    if eagle3 and n and draft.nested_ids is not None:
        guess = guess_convention(
            draft.nested_ids, n,
            vllm_tensor_names=bool(tensors and tensors.vllm_layer_names),
            duplicated_at_top_level=draft.top_level_ids is not None and draft.top_level_ids == draft.nested_ids,
            draft_architecture=draft.architecture,
        )
    if eagle3 and n is None:
        extra.append(
            pairing_diagnostic(
                "warning", "target-layers-unknown",
                "The target config has no num_hidden_layers (nor text_config.num_hidden_layers): the captured layers "
                "cannot be computed.",
                "point --target at the model's own config.json",
            )
        )
    ctx = PairContext(
        target=target, draft=draft, target_config=target_config, draft_config=draft_config, algorithm=algo,
        family=family, rule=rule, captured=captured, capturable=capturable, source=source,
        version_label=version_label, version_known=probe_ok or sglang_version is not None, tensors=tensors,
        weight_index=weight_index, tokenizer_fingerprints=tokenizer_fingerprints, guess=guess,
    )
    diags: list[Diagnostic] = []
    if algo == "NGRAM":
        diags.append(pairing_diagnostic("info", "no-draft",
                                        "NGRAM drafts from the prompt itself; there is no draft to pair."))
    for check in ALL_CHECKS:
        diags.extend(check(ctx))
    diags.extend(extra)
    diags.extend(_version_notes(ctx, sglang_version, probe_ok))

    layer_map = None
    if n and (eagle3 or draft.nested_ids is not None):
        declared = draft.nested_ids if draft.nested_ids is not None else draft.top_level_ids
        label = "draft eagle_config ids" if draft.nested_ids is not None else "draft top-level ids (ignored)"
        lm_guess = guess
        if declared is not None and lm_guess is None:
            lm_guess = guess_convention(
                declared, n, vllm_tensor_names=bool(tensors and tensors.vllm_layer_names),
                draft_architecture=draft.architecture,
            )
        layer_map = build_layer_map(
            n, capturable or (1, n - 1), captured, source, declared, declared_label=label, guess=lm_guess
        )
    return PairingReport(
        diagnostics=sort_diagnostics(diags),
        captured_boundaries=captured,
        declared_ids=draft.nested_ids,
        source=source,
        layer_map=layer_map,
        algorithm=algo,
        sglang_version=version_label,
        suggested_ids=ctx.suggested_ids,
    )


def _rule_version(label: str) -> str:
    """A version the rules understand (a probe may report odd strings); unparsable ⇒ newest known."""
    try:
        parse_version(label)
        return label
    except ValueError:
        return NEWEST_KNOWN_VERSION


def _version_notes(ctx: PairContext, sglang_version: str | None, probe_ok: bool) -> list[Diagnostic]:
    """Say which rules were used; warn when the version is unknown and the captured layers depend on it."""
    out: list[Diagnostic] = []
    if not ctx.is_eagle3 or not ctx.family or not ctx.n:
        return out
    if probe_ok:
        out.append(
            pairing_diagnostic(
                "info", "capture-source",
                f"Captured layers from the installed SGLang {ctx.version_label} "
                "(its own set_eagle3_layers_to_capture): "
                f"{describe_boundaries(ctx.captured)}.",
            )
        )
        return out
    if sglang_version and is_newer_than_known(sglang_version):
        out.append(
            pairing_diagnostic(
                "warning", "version-newer-than-rules",
                f"SGLang {sglang_version} is newer than the rules specdash knows ({NEWEST_KNOWN_VERSION}); they were "
                "applied as the best guess.",
                "run the probe on the host (specdash pair --host ...) for that build's own answer",
            )
        )
    if sglang_version is None:
        results = [
            rule_for(ctx.family, version).boundaries_for(ctx.draft.nested_ids, ctx.n)
            for version in representative_versions()
        ]
        eras: list[tuple[int, int, list[int]]] = []
        for i, boundaries in enumerate(results):
            if eras and eras[-1][2] == boundaries:
                eras[-1] = (eras[-1][0], i, boundaries)
            else:
                eras.append((i, i, boundaries))
        if len(eras) > 1 and ctx.draft.use_aux_hidden_state:
            parts = "; ".join(f"SGLang {era_label(a, b)}: {bounds}" for a, b, bounds in eras)
            out.append(
                pairing_diagnostic(
                    "warning", "version-dependent",
                    f"The SGLang version is unknown and the captured layers depend on it ({parts}); the newest rules "
                    f"({NEWEST_KNOWN_VERSION}) were assumed.",
                    "pass --sglang-version, or --host so the installed SGLang is probed" + _robust_fix(ctx),
                )
            )
        else:
            out.append(
                pairing_diagnostic(
                    "info", "capture-source",
                    f"SGLang version not given: used the {NEWEST_KNOWN_VERSION} rules (the same on every known version "
                    "for this pair).",
                )
            )
    return out


def _robust_fix(ctx: PairContext) -> str:
    """``; or write ... (captures the trained layers on every version)`` when such ids exist."""
    guess = ctx.guess
    if not guess or not guess.boundaries or not ctx.family or not ctx.n:
        return ""
    trained = list(guess.boundaries)
    for candidate in ([b - 1 for b in trained], trained):
        if min(candidate) < 0:
            continue
        if all(rule_for(ctx.family, v).boundaries_for(candidate, ctx.n) == trained for v in representative_versions()):
            return (
                '; or write {"eagle_config": {"eagle_aux_hidden_state_layer_ids": '
                f"{candidate}}}}} into the draft's config.json: SGLang then captures the trained boundaries "
                f"{trained} on every version"
            )
    return ""
