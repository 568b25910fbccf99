"""Reading the facts the pairing check needs out of HF ``config.json`` dicts.

Multimodal wrappers (Kimi-K2.5 ``KimiK25ForConditionalGeneration``, Llama-4, Qwen-VL) keep the language model's
sizes in ``text_config``; SGLang's capture hook works on the text model, so N and the hidden size come from there
(SGLang ``kimi_k25.py``/``mllama4.py`` delegate ``set_eagle3_layers_to_capture``).
"""

from __future__ import annotations

import dataclasses
from typing import Any


def text_config(config: dict) -> dict:
    """The language-model part of ``config``: ``config["text_config"]`` when it is a dict, else ``config``."""
    inner = config.get("text_config")
    return inner if isinstance(inner, dict) else config


def _get(config: dict, key: str) -> Any:
    """``key`` from the text config, falling back to the top level."""
    inner = text_config(config)
    if key in inner:
        return inner[key]
    return config.get(key)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


@dataclasses.dataclass(frozen=True)
class TargetFacts:
    """What the pairing check uses from the target config.

    ``architecture``: ``architectures[0]`` of the top-level config (what SGLang resolves the model class from).
    ``text_model_type``: ``model_type`` of the text config. ``num_layers``: N (``text_config.num_hidden_layers``
    or ``num_hidden_layers``). ``hidden_size``, ``vocab_size``: from the text config. ``num_nextn_predict_layers``:
    MTP layer count (None when absent).
    """

    architecture: str | None
    text_architecture: str | None
    model_type: str | None
    text_model_type: str | None
    num_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    torch_dtype: str | None
    max_position_embeddings: int | None
    bos_token_id: Any
    eos_token_id: Any
    num_nextn_predict_layers: int | None
    has_nextn_key: bool


def target_facts(config: dict) -> TargetFacts:
    """Extract :class:`TargetFacts` from a target ``config.json`` dict (never raises on odd shapes)."""
    archs = config.get("architectures") or []
    inner = text_config(config)
    inner_archs = inner.get("architectures") if inner is not config else None
    return TargetFacts(
        architecture=archs[0] if archs and isinstance(archs[0], str) else None,
        text_architecture=inner_archs[0] if isinstance(inner_archs, list) and inner_archs else None,
        model_type=config.get("model_type"),
        text_model_type=inner.get("model_type"),
        num_layers=_int_or_none(_get(config, "num_hidden_layers")),
        hidden_size=_int_or_none(_get(config, "hidden_size")),
        vocab_size=_int_or_none(_get(config, "vocab_size")),
        torch_dtype=_dtype(config),
        max_position_embeddings=_int_or_none(_get(config, "max_position_embeddings")),
        bos_token_id=_get(config, "bos_token_id"),
        eos_token_id=_get(config, "eos_token_id"),
        num_nextn_predict_layers=_int_or_none(_get(config, "num_nextn_predict_layers")),
        has_nextn_key="num_nextn_predict_layers" in config or "num_nextn_predict_layers" in inner,
    )


def _dtype(config: dict) -> str | None:
    value = _get(config, "torch_dtype") or _get(config, "dtype")
    return value if isinstance(value, str) else None


@dataclasses.dataclass(frozen=True)
class DraftFacts:
    """What the pairing check uses from the draft config.

    ``nested_ids``: ``eagle_config.eagle_aux_hidden_state_layer_ids`` — the only place SGLang reads capture ids
    from (SGLang ``spec_aux_hidden_state.py`` 0.5.23). ``top_level_ids``: the top-level
    key (vLLM/speculators style; SGLang ignores it for capture). ``use_aux_hidden_state``: the nested flag
    (default True). ``target_hidden_size``: the key when present. ``num_aux_hidden_states``: explicit key.
    ``draft_vocab_size``: None when absent or null. ``verifier``: ``speculators_config.verifier.name_or_path``.
    """

    architecture: str | None
    model_type: str | None
    nested_ids: list[int] | None
    top_level_ids: list[int] | None
    has_eagle_config: bool
    use_aux_hidden_state: bool
    hidden_size: int | None
    target_hidden_size: int | None
    num_aux_hidden_states: int | None
    num_hidden_layers: int | None
    vocab_size: int | None
    draft_vocab_size: int | None
    tie_word_embeddings: bool
    torch_dtype: str | None
    max_position_embeddings: int | None
    bos_token_id: Any
    eos_token_id: Any
    norm_before_fc: bool
    verifier: str | None

    @property
    def input_hidden_size(self) -> int | None:
        """``target_hidden_size`` when present, else ``hidden_size`` (what SGLang's llama_eagle3 builds ``fc`` from)."""
        return self.target_hidden_size if self.target_hidden_size is not None else self.hidden_size


def draft_facts(config: dict) -> DraftFacts:
    """Extract :class:`DraftFacts` from a draft ``config.json`` dict (never raises on odd shapes)."""
    archs = config.get("architectures") or []
    eagle = config.get("eagle_config")
    eagle = eagle if isinstance(eagle, dict) else None
    spec = config.get("speculators_config")
    verifier = None
    if isinstance(spec, dict) and isinstance(spec.get("verifier"), dict):
        name = spec["verifier"].get("name_or_path")
        verifier = name if isinstance(name, str) else None
    use_aux = eagle.get("use_aux_hidden_state", True) if eagle else True
    norm_before_fc = bool((eagle or {}).get("norm_before_fc", config.get("norm_before_fc", False)))
    return DraftFacts(
        architecture=archs[0] if archs and isinstance(archs[0], str) else None,
        model_type=config.get("model_type"),
        nested_ids=_int_list(eagle.get("eagle_aux_hidden_state_layer_ids")) if eagle else None,
        top_level_ids=_int_list(config.get("eagle_aux_hidden_state_layer_ids")),
        has_eagle_config=eagle is not None,
        use_aux_hidden_state=bool(use_aux),
        hidden_size=_int_or_none(config.get("hidden_size")),
        target_hidden_size=_int_or_none(config.get("target_hidden_size")),
        num_aux_hidden_states=_int_or_none(config.get("num_aux_hidden_states")),
        num_hidden_layers=_int_or_none(config.get("num_hidden_layers")),
        vocab_size=_int_or_none(config.get("vocab_size")),
        draft_vocab_size=_int_or_none(config.get("draft_vocab_size")),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        torch_dtype=_dtype(config),
        max_position_embeddings=_int_or_none(config.get("max_position_embeddings")),
        bos_token_id=config.get("bos_token_id"),
        eos_token_id=config.get("eos_token_id"),
        norm_before_fc=norm_before_fc,
        verifier=verifier,
    )
