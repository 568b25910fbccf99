"""The static pairing checks. Each takes a :class:`PairContext` and returns a list of diagnostics.

Severities: ``error`` where static evidence makes failure or garbage certain,
``warning`` where the files cannot prove the convention, ``info`` for what SGLang will do.
"""

from __future__ import annotations

import dataclasses
import json

from specdash.sglang.diagnostics import Diagnostic
from specdash.sglang.pairing.architectures import (
    EAGLE3_DRAFT_ARCHS,
    EAGLE3_DRAFT_ARCHS_SOME_BUILDS,
    EAGLE_DRAFT_ARCHS,
    FOREIGN_EAGLE3_ARCHS,
    archs_without_eagle3_hook,
    looks_eagle3_arch,
)
from specdash.sglang.pairing.configs import DraftFacts, TargetFacts
from specdash.sglang.pairing.conventions import ConventionGuess, describe_boundaries, guess_convention
from specdash.sglang.pairing.layer_rules import CaptureRule, rule_for
from specdash.sglang.pairing.report import Severity, pairing_diagnostic
from specdash.sglang.pairing.safetensors_header import DraftTensors


@dataclasses.dataclass
class PairContext:
    """Everything the checks read.

    ``algorithm``: upper-case SGLang ``speculative_algorithm`` as typed (``NEXTN`` kept; it runs as EAGLE).
    ``rule``: the capture rule used (None when the target family is unknown). ``captured``: boundaries SGLang
    captures (empty when not EAGLE3 or unknown). ``capturable``: inclusive boundary range. ``source``:
    ``probe`` or ``rules:<version>``. ``version_known``: a version was given or probed. ``guess``: convention guess
    of the ids SGLang reads. ``suggested_ids``: set by the checks that propose new ids.
    """

    target: TargetFacts
    draft: DraftFacts
    target_config: dict
    draft_config: dict
    algorithm: str
    family: str | None
    rule: CaptureRule | None
    captured: list[int]
    capturable: tuple[int, int] | None
    source: str
    version_label: str
    version_known: bool
    tensors: DraftTensors | None
    weight_index: dict | None
    tokenizer_fingerprints: tuple[str, str] | None
    guess: ConventionGuess | None = None
    suggested_ids: list[int] | None = None

    @property
    def is_eagle3(self) -> bool:
        return self.algorithm == "EAGLE3"

    @property
    def n(self) -> int | None:
        return self.target.num_layers


def _ids_json(ids: list[int]) -> str:
    return json.dumps({"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids}})


def _fix_ids_text(ids: list[int]) -> str:
    return f"write {_ids_json(ids)} into the draft's config.json"


def _draft_is_eagle3(ctx: PairContext) -> bool:
    d, t = ctx.draft, ctx.tensors
    if looks_eagle3_arch(d.architecture) or d.nested_ids is not None or d.top_level_ids is not None:
        return True
    hidden = ctx.target.hidden_size
    if t and t.fc_shape and len(t.fc_shape) == 2 and hidden:
        # EAGLE(-2) heads also have an fc, over [embedding, hidden] = 2 x hidden (llama_eagle.py), so only
        # k >= 3 target layers prove an EAGLE-3 head.
        return t.fc_shape[1] >= 3 * hidden
    return False


# -- algorithm / architecture ------------------------------------------------------------------------------------


def check_algorithm_architecture(ctx: PairContext) -> list[Diagnostic]:
    """EAGLE-3 draft under EAGLE/NEXTN (accept length 1.0: the draft skips ``fc`` when the incoming width
    equals its embedding width, llama_eagle3.py; SGLang PR #21272); non-EAGLE-3 or unregistered draft class under
    EAGLE3 (SGLang PR #24077 proposes an alias, PR #33966 an automatic rewrite); EAGLE3 on a target class without
    ``set_eagle3_layers_to_capture`` (0.5.23 attention_backend_setup.py raises ValueError)."""
    out: list[Diagnostic] = []
    arch = ctx.draft.architecture
    if ctx.algorithm in ("EAGLE", "NEXTN") and _draft_is_eagle3(ctx):
        out.append(
            pairing_diagnostic(
                "error",
                "eagle3-draft-as-eagle",
                f"The draft is an EAGLE-3 head ({arch or 'fc over several target layers'}) but the algorithm is "
                f"{ctx.algorithm}{' (runs as EAGLE)' if ctx.algorithm == 'NEXTN' else ''}: SGLang captures no aux "
                "hidden states, the draft skips its fc layer and the accept length is exactly 1.0, with no warning.",
                "use --speculative-algorithm EAGLE3",
            )
        )
    if not ctx.is_eagle3:
        return out
    if arch in EAGLE_DRAFT_ARCHS:
        out.append(
            pairing_diagnostic(
                "error", "draft-arch-not-eagle3",
                f"The draft class {arch} is an EAGLE (EAGLE-2) head; EAGLE3 needs an EAGLE-3 head.",
                "use --speculative-algorithm EAGLE for this draft, or an EAGLE-3 draft",
            )
        )
    elif arch in FOREIGN_EAGLE3_ARCHS:
        out.append(
            pairing_diagnostic(
                "error", "draft-arch-unregistered",
                f"SGLang does not register the draft architecture {arch} ({FOREIGN_EAGLE3_ARCHS[arch]}); loading fails "
                "or loads the wrong class.",
                'set "architectures": ["LlamaForCausalLMEagle3"] in the draft config.json (for a Llama-layout head), '
                "or use an SGLang-format copy of the draft",
            )
        )
    elif arch in EAGLE3_DRAFT_ARCHS_SOME_BUILDS:
        out.append(
            pairing_diagnostic(
                "warning", "draft-arch-unregistered",
                f"{arch} is registered only in some SGLang builds (0.5.23 registers Eagle3DeepseekV2ForCausalLM).",
                'set "architectures": ["Eagle3DeepseekV2ForCausalLM"] if the installed SGLang lacks it',
            )
        )
    elif arch and arch not in EAGLE3_DRAFT_ARCHS:
        out.append(
            pairing_diagnostic(
                "warning", "draft-arch-unknown",
                f"The draft architecture {arch} is not an EAGLE-3 class SGLang is known to register "
                "(LlamaForCausalLMEagle3, Eagle3DeepseekV2ForCausalLM).",
                "check that the draft is an EAGLE-3 head for SGLang",
            )
        )
    if arch == "Eagle3DeepseekV2ForCausalLM" and (ctx.draft.num_hidden_layers or 1) > 1:
        out.append(
            pairing_diagnostic(
                "error", "draft-layers",
                f"The MLA EAGLE-3 draft declares {ctx.draft.num_hidden_layers} layers; SGLang raises "
                "\"EAGLE3 currently only supports 1 layer\".",
                'set "num_hidden_layers": 1 (or use a one-layer draft)',
            )
        )
    tarch = ctx.target.architecture
    if tarch and tarch in archs_without_eagle3_hook():
        out.append(
            pairing_diagnostic(
                "error", "target-no-eagle3",
                f"The target class {tarch} has no set_eagle3_layers_to_capture in SGLang 0.5.23: EAGLE3 startup "
                f"raises \"ValueError: Model {tarch} does not implement set_eagle3_layers_to_capture\".",
                "use another algorithm (NEXTN/EAGLE/STANDALONE) or a target SGLang supports for EAGLE3",
            )
        )
    elif ctx.family is None and ctx.source != "probe":
        out.append(
            pairing_diagnostic(
                "warning", "target-arch-unknown",
                f"The target architecture {tarch or '(none)'} is not in the SGLang capture table; the captured layers "
                "cannot be predicted from rules.",
                "run the probe on a host with SGLang installed (specdash pair --host ...)",
            )
        )
    return out


# -- shapes --------------------------------------------------------------------------------------------------------


def check_hidden_size(ctx: PairContext) -> list[Diagnostic]:
    """Draft ``target_hidden_size`` (else ``hidden_size``) must equal the target ``hidden_size`` (SGLang
    llama_eagle3.py, kimi_k25_eagle3.py)."""
    if not ctx.is_eagle3:
        return []
    want, have = ctx.target.hidden_size, ctx.draft.input_hidden_size
    if want is None or have is None or want == have:
        return []
    key = "target_hidden_size" if ctx.draft.target_hidden_size is not None else "hidden_size"
    return [
        pairing_diagnostic(
            "error", "hidden-size",
            f"The draft expects target hidden states of width {have} (draft {key}) but the target's hidden_size is "
            f"{want}: SGLang builds fc for {have} per layer, so weight loading fails or the draft reads garbage.",
            f"use a draft trained for this target (draft {key} must be {want})",
        )
    ]


def check_fc_width(ctx: PairContext) -> list[Diagnostic]:
    """``fc.weight`` is ``[draft hidden, k × target hidden]``; k must equal the number of captured states
    (SGLang PR #32334: a gpt-oss draft crashed on 8,640 vs 5,760) and the count the draft builds fc for (llama_eagle3.py
    0.5.23: ``num_aux_hidden_states`` > len(eagle_config ids) > 3)."""
    t = ctx.tensors
    hidden = ctx.target.hidden_size
    if not ctx.is_eagle3 or not t or not t.fc_shape or len(t.fc_shape) != 2 or not hidden:
        return []
    width = t.fc_shape[1]
    out: list[Diagnostic] = []
    if width % hidden:
        return [
            pairing_diagnostic(
                "error", "fc-width",
                f"fc.weight takes {width} inputs, which is not a multiple of the target hidden size {hidden}: the "
                "draft was trained for a different target.",
                "use a draft trained for this target",
            )
        ]
    k = width // hidden
    states = len(set(b for b in ctx.captured if _in_range(ctx, b)))
    if ctx.captured and ctx.draft.use_aux_hidden_state and states != k:
        out.append(
            pairing_diagnostic(
                "error", "fc-width",
                f"fc.weight takes {width} = {k} x {hidden} inputs ({k} target layers) but SGLang will feed "
                f"{states} hidden state(s) ({states * hidden} values): "
                "the first draft step crashes with a shape error.",
                f"declare {k} capturable layer ids in eagle_config.eagle_aux_hidden_state_layer_ids",
            )
        )
    declared = ctx.draft.num_aux_hidden_states
    if declared is None:
        declared = len(ctx.draft.nested_ids) if ctx.draft.nested_ids else 3
    if declared != k:
        out.append(
            pairing_diagnostic(
                "error", "fc-width",
                f"The draft config makes SGLang build fc for {declared} aux states but fc.weight holds {k}: weight "
                "loading fails with a shape mismatch.",
                f'set "num_aux_hidden_states": {k} or declare {k} ids in eagle_config',
            )
        )
    return out


def _in_range(ctx: PairContext, b: int) -> bool:
    lo, hi = ctx.capturable or (1, (ctx.n or 1) - 1)
    return lo <= b <= hi


def check_boundary_range(ctx: PairContext) -> list[Diagnostic]:
    """A captured boundary 0 (embedding; residual None at layer 0 in llama/deepseek, facts §1) or ≥ N (never
    reached by the layer loop ⇒ one fewer state; N capturable only with the gpt-oss rule), or duplicates."""
    if not ctx.is_eagle3 or not ctx.captured or ctx.n is None:
        return []
    lo, hi = ctx.capturable or (1, ctx.n - 1)
    out: list[Diagnostic] = []
    bad = [b for b in ctx.captured if not lo <= b <= hi]
    if bad:
        parts = []
        for b in bad:
            if b <= 0:
                parts.append(f"{b} (the embedding output, not a decoder hidden state)" if b == 0 else f"{b} (negative)")
            else:
                parts.append(f"{b} (past the last capturable boundary {hi}; the layer loop never reaches it)")
        out.append(
            pairing_diagnostic(
                "error", "boundary-range",
                f"SGLang would capture boundaries {ctx.captured} for a {ctx.n}-layer target; "
                + "; ".join(parts)
                + f". The draft then gets {len([b for b in ctx.captured if lo <= b <= hi])} states instead of "
                f"{len(ctx.captured)} and crashes or reads garbage.",
                ctx.suggested_ids and _fix_ids_text(ctx.suggested_ids)
                or f"use ids whose boundaries lie in [{lo}, {hi}]",
            )
        )
    if len(set(ctx.captured)) != len(ctx.captured):
        out.append(
            pairing_diagnostic(
                "error", "boundary-duplicate",
                f"The ids map to duplicate boundaries {ctx.captured}; SGLang captures each layer once, so the draft "
                "gets fewer states than its fc expects.",
                "declare distinct ids",
            )
        )
    elif ctx.captured != sorted(ctx.captured):
        out.append(
            pairing_diagnostic(
                "warning", "boundary-order",
                f"The ids are not ascending ({ctx.captured}); SGLang concatenates captured states in layer order "
                f"{sorted(ctx.captured)}, not in list order.",
                "list the ids in ascending order (and check the order used in training)",
            )
        )
    return out


# -- ids: location and convention ------------------------------------------------------------------------------


def check_ids_location(ctx: PairContext) -> list[Diagnostic]:
    """Ids only at the top level are ignored for capture (SGLang model_runner.py 0.5.0rc0 and 0.5.23
    spec_aux_hidden_state.py reads only ``eagle_config``): SGLang uses the default. Error when neither reading (x, x+1)
    equals that default."""
    d = ctx.draft
    if not ctx.is_eagle3 or d.nested_ids is not None or d.top_level_ids is None or ctx.n is None or not ctx.rule:
        return []
    ids = d.top_level_ids
    default = ctx.captured
    readings = {"as boundaries": list(ids), "as block outputs": [i + 1 for i in ids]}
    matching = [name for name, b in readings.items() if sorted(b) == sorted(default)]
    guess = guess_convention(
        ids, ctx.n, vllm_tensor_names=bool(ctx.tensors and ctx.tensors.vllm_layer_names),
        draft_architecture=d.architecture,
    )
    trained = list(guess.boundaries) if guess.boundaries else readings["as boundaries"]
    fix_ids = ctx.rule.ids_for(trained, ctx.n) if ctx.rule else None
    if fix_ids is not None and not matching:
        ctx.suggested_ids = fix_ids
    fix = _fix_ids_text(fix_ids) if fix_ids is not None else "move the ids into eagle_config"
    if matching:
        return [
            pairing_diagnostic(
                "warning", "ids-top-level-only",
                f"The draft's eagle_aux_hidden_state_layer_ids {ids} are at the top level, which SGLang ignores; it "
                f"captures its default {describe_boundaries(default)} — the same layers when the ids are read "
                f"{matching[0]}, so this is probably fine.",
                fix,
            )
        ]
    return [
        pairing_diagnostic(
            "error", "ids-top-level-only",
            f"The draft's eagle_aux_hidden_state_layer_ids {ids} are at the top level (vLLM/speculators style); SGLang "
            f"reads only eagle_config.eagle_aux_hidden_state_layer_ids, so it silently captures its default "
            f"{describe_boundaries(default)}, while the draft was trained on {describe_boundaries(trained)} "
            f"({guess.reason if guess.boundaries else 'reading the ids as boundaries'}).",
            fix,
        )
    ]


def check_id_convention(ctx: PairContext) -> list[Diagnostic]:
    """Declared ids whose convention disagrees with SGLang's shift rule for this architecture/version
    (SGLang PR #25454 for Kimi/DeepSeek, PR #32334 for gpt-oss; a field report's [3, 31, 59])."""
    d = ctx.draft
    if not ctx.is_eagle3 or not ctx.rule or ctx.n is None or not d.use_aux_hidden_state:
        return []
    ids = d.nested_ids
    if ids is None:
        return [
            pairing_diagnostic(
                "info", "ids-default",
                f"The draft declares no eagle_config ids: SGLang captures its default "
                f"{describe_boundaries(ctx.captured)}, which is every common trainer's default.",
            )
        ]
    guess = ctx.guess or guess_convention(ids, ctx.n)
    n = ctx.n
    captured = ctx.captured
    rule_text = _rule_text(ctx)
    if guess.boundaries is None:
        other = [i + 1 for i in ids] if captured == list(ids) else list(ids)
        alt_ids = ctx.rule.ids_for(other, n)
        return [
            pairing_diagnostic(
                "warning", "id-convention",
                f"The draft's ids {ids} do not record their convention. {rule_text[0].upper() + rule_text[1:]}, so "
                f"SGLang captures {describe_boundaries(captured)}. If the trainer meant boundaries {other} instead, "
                "every aux state is one block off and the accept length drops with no log line.",
                f"if the draft was trained on boundaries {other}: {_fix_ids_text(alt_ids)}" if alt_ids else
                "check the ids against the training run's capture layers",
            )
        ]
    trained = list(guess.boundaries)
    if sorted(captured) == sorted(trained):
        return [
            pairing_diagnostic(
                "info", "id-convention",
                f"The draft's ids {ids} read as {guess.convention} ids ({guess.reason}); {rule_text}, so SGLang "
                f"captures {describe_boundaries(captured)} — the trained layers.",
            )
        ]
    fix_ids = ctx.rule.ids_for(trained, n)
    ctx.suggested_ids = fix_ids
    severity: Severity = "error" if guess.strength == "strong" else "warning"
    return [
        pairing_diagnostic(
            severity, "id-convention",
            f"SGLang will feed the draft boundaries {describe_boundaries(captured)}, but it was most likely trained on "
            f"{describe_boundaries(trained)}: {rule_text}, while {guess.reason}. Every aux state is "
            f"{_offset_words(captured, trained)}; expect a low accept length and no log line about it.",
            _fix_ids_text(fix_ids) + _robust_note(ctx, fix_ids, trained) if fix_ids is not None
            else f"retrain or re-export the draft for boundaries SGLang can capture ({trained})",
        )
    ]


def _offset_words(captured: list[int], trained: list[int]) -> str:
    deltas = {c - t for c, t in zip(sorted(captured), sorted(trained), strict=False)}
    if len(deltas) == 1:
        delta = deltas.pop()
        return f"{abs(delta)} block{'s' if abs(delta) != 1 else ''} too {'deep' if delta > 0 else 'shallow'}"
    return "taken from the wrong layer"


def _robust_note(ctx: PairContext, ids: list[int], trained: list[int]) -> str:
    """Say whether ``ids`` give ``trained`` on every known SGLang era of this family."""
    if not ctx.family:
        return ""
    from specdash.sglang.pairing.layer_rules import representative_versions

    n = ctx.n or 0
    ok = all(rule_for(ctx.family, v).boundaries_for(ids, n) == trained for v in representative_versions())
    return " (SGLang then captures these layers on every version)" if ok else f" (for SGLang {ctx.version_label})"


def _rule_text(ctx: PairContext) -> str:
    rule = ctx.rule
    assert rule is not None
    where = ("the installed SGLang's own set_eagle3_layers_to_capture" if ctx.source == "probe"
             else f"SGLang {rule.version}")
    ids = ctx.draft.nested_ids or []
    arch = ctx.target.architecture or "this target"
    if rule.first_id_rule:
        how = "adds 1 to every id only when the first id is 1" + (
            " (it is, so it adds 1)" if ids and ids[0] == 1 else " (it is not, so it uses them as boundaries)"
        )
    elif rule.boundary_rule:
        how = "keeps the ids as boundaries when the largest equals N, else adds 1"
    else:
        how = "adds 1 to every id (it reads them as outputs of blocks)"
    return f"for {arch}, {where} {how}"


# -- vocabulary, embeddings ------------------------------------------------------------------------------------


def check_vocab(ctx: PairContext) -> list[Diagnostic]:
    """EAGLE-3 vocab: ``draft_vocab_size`` < ``vocab_size`` needs a ``d2t`` of that length (SGLang llama_eagle3.py;
    SpecForge scripts/train_eagle3.py);
    ``tie_word_embeddings: true`` contradicts a smaller draft vocab (llama_eagle3.py); draft ``vocab_size`` ≠ target
    (warning)."""
    if not ctx.is_eagle3:
        return []
    d, t = ctx.draft, ctx.target
    out: list[Diagnostic] = []
    full = t.vocab_size or d.vocab_size
    if d.vocab_size is not None and t.vocab_size is not None and d.vocab_size != t.vocab_size:
        out.append(
            pairing_diagnostic(
                "warning", "vocab-size",
                f"The draft's vocab_size {d.vocab_size} differs from the target's {t.vocab_size}; EAGLE-3 drafts copy "
                "the target's vocabulary, so this hints at a draft for another model family.",
                "use a draft trained for this target",
            )
        )
    small = d.draft_vocab_size is not None and full is not None and d.draft_vocab_size < full
    if small:
        tensors = ctx.tensors
        if tensors is not None and not tensors.has_d2t:
            out.append(
                pairing_diagnostic(
                    "error", "d2t-missing",
                    f"draft_vocab_size {d.draft_vocab_size} < vocab_size {full} but the draft weights have no d2t "
                    "tensor: SGLang reads draft token indices as target ids and almost nothing is accepted.",
                    "export the draft with its d2t mapping (SpecForge's exporter keeps d2t/t2d)",
                )
            )
        elif (tensors is not None and tensors.d2t_shape is not None
              and tuple(tensors.d2t_shape) != (d.draft_vocab_size,)):
            out.append(
                pairing_diagnostic(
                    "error", "d2t-shape",
                    f"d2t has shape {list(tensors.d2t_shape)} but draft_vocab_size is {d.draft_vocab_size}: the token "
                    "map does not belong to this head.",
                    "export d2t together with the lm_head it maps",
                )
            )
        elif tensors is None:
            out.append(
                pairing_diagnostic(
                    "info", "d2t-unchecked",
                    f"draft_vocab_size {d.draft_vocab_size} < vocab_size {full}: a d2t tensor is required; the draft "
                    "weights were not read, so it was not checked.",
                )
            )
        if d.tie_word_embeddings:
            out.append(
                pairing_diagnostic(
                    "warning", "tie-embeddings-vocab",
                    f"tie_word_embeddings is true, which makes the draft lm_head the (full-vocabulary) embedding, but "
                    f"draft_vocab_size is {d.draft_vocab_size} < {full}.",
                    'set "tie_word_embeddings": false (EAGLE-3 drafts are saved that way)',
                )
            )
    if (
        ctx.tensors is not None
        and ctx.tensors.shapes_known
        and d.target_hidden_size is not None
        and d.hidden_size is not None
        and d.target_hidden_size != d.hidden_size
        and not ctx.tensors.has_embed
    ):
        out.append(
            pairing_diagnostic(
                "warning", "embed-missing",
                f"target_hidden_size {d.target_hidden_size} != hidden_size {d.hidden_size}, so SGLang does not share "
                "the target's embedding, yet the draft weights have no embed_tokens.weight: the draft embedding stays "
                "uninitialised.",
                "export the draft with its embed_tokens.weight",
            )
        )
    return out


def check_standalone_vocab(ctx: PairContext) -> list[Diagnostic]:
    """STANDALONE: target and draft must share vocab_size and tokenizer vocabulary (PR #23838 raises ValueError;
    before it the output was silently corrupted, SGLang issue #24051)."""
    if ctx.algorithm != "STANDALONE":
        return []
    t, d = ctx.target, ctx.draft
    out: list[Diagnostic] = []
    if t.vocab_size is not None and d.vocab_size is not None and t.vocab_size != d.vocab_size:
        out.append(
            pairing_diagnostic(
                "error", "standalone-vocab",
                f"STANDALONE draft and target must share one tokenizer: target vocab_size {t.vocab_size}, draft "
                f"vocab_size {d.vocab_size}. Newer SGLang refuses to start; older ones start and every accepted draft "
                "token decodes to a different string.",
                "use a draft from the same model family and tokenizer",
            )
        )
    fps = ctx.tokenizer_fingerprints
    if fps and fps[0] and fps[1] and fps[0] != fps[1]:
        out.append(
            pairing_diagnostic(
                "error", "standalone-tokenizer",
                "STANDALONE draft and target tokenizers differ (their vocabularies do not match); SGLang ≥ PR #23838 "
                "refuses to start, older builds corrupt the output silently.",
                "use a draft with the target's tokenizer",
            )
        )
    return out


def check_nextn(ctx: PairContext) -> list[Diagnostic]:
    """NEXTN/MTP: the target needs ``num_nextn_predict_layers`` (== 1 for the DeepSeek NextN loader) and MTP
    weights ``model.layers.{N}.eh_proj.weight`` (SGLang deepseek_nextn.py)."""
    if ctx.algorithm != "NEXTN":
        return []
    t = ctx.target
    out: list[Diagnostic] = []
    deepseek = (t.architecture or "").startswith("Deepseek")
    if not t.has_nextn_key:
        out.append(
            pairing_diagnostic(
                "error", "nextn-missing",
                "NEXTN needs num_nextn_predict_layers in the target config; SGLang stops with "
                "\"num_nextn_predict_layers is not in the config\".",
                "use a checkpoint with MTP layers (or another algorithm)",
            )
        )
    elif t.num_nextn_predict_layers is not None and t.num_nextn_predict_layers < 1:
        out.append(
            pairing_diagnostic(
                "error", "nextn-missing",
                f"num_nextn_predict_layers is {t.num_nextn_predict_layers}: the checkpoint has no MTP head.",
                "use a checkpoint with MTP layers (or EAGLE3 with a separate draft)",
            )
        )
    elif deepseek and t.num_nextn_predict_layers not in (None, 1):
        out.append(
            pairing_diagnostic(
                "error", "nextn-count",
                f"num_nextn_predict_layers is {t.num_nextn_predict_layers}; the DeepSeek NextN loader says "
                "\"Only 1 nextn layer is supported\".",
                "use a checkpoint with one MTP layer",
            )
        )
    index = ctx.weight_index
    if index and isinstance(index.get("weight_map"), dict) and t.num_layers is not None and deepseek:
        name = f"model.layers.{t.num_layers}.eh_proj.weight"
        if name not in index["weight_map"]:
            out.append(
                pairing_diagnostic(
                    "error", "nextn-weights",
                    f"The weight index has no {name}: the MTP block SGLang loads for NEXTN is missing.",
                    "use the checkpoint that ships the MTP layer weights",
                )
            )
    return out


# -- dtype, context, tokens -------------------------------------------------------------------------------------


def check_soft_differences(ctx: PairContext) -> list[Diagnostic]:
    """Warnings: ``torch_dtype`` differs (SGLang PR #3431: pass --dtype), draft ``max_position_embeddings`` smaller
    (SpecForge PR #271, SGLang issue #6783), bos/eos differ (SpecForge's auto-generated draft config,
    scripts/train_eagle3.py), speculators verifier names another model (vLLM PR #16937)."""
    if ctx.algorithm == "NGRAM":
        return []
    t, d = ctx.target, ctx.draft
    out: list[Diagnostic] = []
    if t.torch_dtype and d.torch_dtype and t.torch_dtype != d.torch_dtype:
        out.append(
            pairing_diagnostic(
                "warning", "dtype",
                f"The draft's torch_dtype is {d.torch_dtype}, the target's {t.torch_dtype}; SGLang loads the draft in "
                "its own config dtype unless --dtype is given, which can fail or slow the draft.",
                f"pass --dtype {t.torch_dtype} (or set the draft's torch_dtype to {t.torch_dtype})",
            )
        )
    if (
        t.max_position_embeddings and d.max_position_embeddings
        and d.max_position_embeddings < t.max_position_embeddings
    ):
        out.append(
            pairing_diagnostic(
                "warning", "context-length",
                f"The draft's max_position_embeddings is {d.max_position_embeddings}, the target's "
                f"{t.max_position_embeddings}: past {d.max_position_embeddings} tokens the draft runs outside its "
                "trained positions (very low accept length reported, SpecForge PR #271).",
                f'set the draft\'s "max_position_embeddings" to {t.max_position_embeddings} if it was trained with '
                "that rope, or keep requests shorter",
            )
        )
    for key in ("bos_token_id", "eos_token_id"):
        tv, dv = getattr(t, key), getattr(d, key)
        if tv is not None and dv is not None and _norm_tok(tv) != _norm_tok(dv):
            out.append(
                pairing_diagnostic(
                    "warning", "special-tokens",
                    f"{key} differs (target {tv}, draft {dv}): a hint that the draft was made for another tokenizer.",
                    "check that the draft was trained for this target",
                )
            )
    if d.verifier:
        name = ctx.target_config.get("_name_or_path")
        if isinstance(name, str) and name and _basename(name) != _basename(d.verifier):
            out.append(
                pairing_diagnostic(
                    "warning", "verifier-name",
                    f"The draft's speculators_config names its verifier {d.verifier!r}, the target is {name!r}.",
                    "use a draft made for this target",
                )
            )
    return out


def _norm_tok(value):
    return sorted(value) if isinstance(value, list) else [value]


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1].lower()


def check_aux_flags(ctx: PairContext) -> list[Diagnostic]:
    """Info: ``eagle_config.use_aux_hidden_state: false`` (SGLang then captures one hidden state)."""
    if ctx.is_eagle3 and not ctx.draft.use_aux_hidden_state:
        return [
            pairing_diagnostic(
                "info", "aux-off",
                "eagle_config.use_aux_hidden_state is false: SGLang captures no extra target layers and the draft "
                "gets only the last hidden state.",
            )
        ]
    return []


ALL_CHECKS = (
    check_algorithm_architecture,
    check_hidden_size,
    check_ids_location,
    check_id_convention,
    check_boundary_range,
    check_fc_width,
    check_vocab,
    check_standalone_vocab,
    check_nextn,
    check_soft_differences,
    check_aux_flags,
)
