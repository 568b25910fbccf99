"""Model architectures as SGLang's speculative rules see them: the auto-chosen depth triple and the MTP targets
that bundle their own draft head, per version, plus a guess of the architecture from a model path's name.

Source: ``auto_choose_speculative_params`` and the MTP architecture list in ``server_args.py`` of the PyPI wheels
0.4.5, 0.4.7, 0.4.10, 0.5.1, 0.5.5, 0.5.8, 0.5.9 and ``arg_groups/speculative_hook.py`` of 0.5.23.
"""

from __future__ import annotations

import re

from specdash.sglang.versions import Profile

Triple = tuple[int, int, int]

_DEEPSEEK = ["DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM"]
#: (first release, archs that get (3, 1, 4), default for other archs). Llama and Grok always get (5, 4, 8).
_AUTO_TABLE: tuple[tuple[str, tuple[str, ...], Triple], ...] = (
    ("0.4.5", (), (5, 4, 8)),
    ("0.4.7", tuple(_DEEPSEEK), (5, 4, 8)),
    ("0.5.0rc0", tuple(_DEEPSEEK + ["GptOssForCausalLM"]), (5, 4, 8)),
    ("0.5.5", ("DeepseekV32ForCausalLM", *_DEEPSEEK, "GptOssForCausalLM", "BailingMoeForCausalLM",
               "BailingMoeV2ForCausalLM"), (5, 4, 8)),
    ("0.5.8", ("DeepseekV32ForCausalLM", *_DEEPSEEK, "GptOssForCausalLM", "Glm4MoeForCausalLM",
               "Glm4MoeLiteForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
               "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "MiMoV2FlashForCausalLM"), (3, 1, 4)),
)
_LLAMA_GROK = ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM")

#: (first release, target archs whose checkpoint carries the MTP/NextN draft: draft path defaults to the model).
_MTP_TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0.4.7", ("DeepseekV3ForCausalLM",)),
    ("0.4.10", ("DeepseekV3ForCausalLM", "Glm4MoeForCausalLM")),
    ("0.5.5", ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeForCausalLM", "BailingMoeForCausalLM",
               "BailingMoeV2ForCausalLM")),
    ("0.5.8", ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeForCausalLM", "Glm4MoeLiteForCausalLM",
               "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "MistralLarge3ForCausalLM",
               "PixtralForConditionalGeneration")),
    ("0.5.9", ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeForCausalLM", "Glm4MoeLiteForCausalLM",
               "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "BailingMoeV2_5ForCausalLM",
               "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration")),
    ("0.5.12", ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
                "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
                "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
                "HYV3ForCausalLM")),
    ("0.5.23", ("DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
                "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
                "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
                "HYV3ForCausalLM", "HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration")),
)
#: MTP archs for which a user-given draft path does not trigger "DeepSeek MTP does not require ...".
MTP_NO_WARNING = ("MistralLarge3ForCausalLM", "PixtralForConditionalGeneration")


def _pick(profile: Profile, table):
    chosen = None
    for row in table:
        if profile.at_least(row[0]):
            chosen = row
    return chosen


def auto_triple(profile: Profile, algorithm: str, arch: str | None) -> Triple | None:
    """(num_steps, topk, num_draft_tokens) SGLang auto-chooses when all three are unset, or None when it depends on
    an unknown architecture. STANDALONE is (3, 1, 4) from 0.5.5 on."""
    row = _pick(profile, _AUTO_TABLE)
    if row is None:
        return None
    if algorithm == "STANDALONE" and profile.at_least("0.5.5"):
        return (3, 1, 4)
    _, short, default = row
    if arch is None:
        if default == (5, 4, 8) and not short:
            return (5, 4, 8)
        return None
    if arch in _LLAMA_GROK:
        return (5, 4, 8)
    if arch in short:
        return (3, 1, 4)
    # 0.5.9+ adds more names to the (3, 1, 4) list, all of which equal the "other" default from 0.5.8 on
    return default


def auto_triple_choices(profile: Profile, algorithm: str) -> dict[str, Triple]:
    """For an unknown architecture: ``{"LlamaForCausalLM, Grok1ForCausalLM": (5,4,8), "...": (3,1,4),
    "any other architecture": ...}`` as the profile decides."""
    row = _pick(profile, _AUTO_TABLE)
    if row is None:
        return {}
    if algorithm == "STANDALONE" and profile.at_least("0.5.5"):
        return {"any architecture (STANDALONE)": (3, 1, 4)}
    _, short, default = row
    out = {"LlamaForCausalLM, Grok1ForCausalLM": (5, 4, 8)}
    if short:
        out[", ".join(short)] = (3, 1, 4)
    out["any other architecture"] = default
    return out


def mtp_architectures(profile: Profile) -> tuple[str, ...]:
    """Target architectures whose own checkpoint is used as the draft when no draft path is given."""
    row = _pick(profile, _MTP_TABLE)
    return row[1] if row else ()


#: Lower-case name fragment -> architecture, for a model path whose config.json cannot be read. Order matters.
_NAME_HINTS: tuple[tuple[str, str], ...] = (
    ("gpt-oss", "GptOssForCausalLM"),
    ("deepseek-v3.2", "DeepseekV32ForCausalLM"),
    ("deepseek-v3", "DeepseekV3ForCausalLM"),
    ("deepseek-r1-distill-qwen", "Qwen2ForCausalLM"),
    ("deepseek-r1-distill-llama", "LlamaForCausalLM"),
    ("deepseek-r1", "DeepseekV3ForCausalLM"),
    ("deepseek-v2", "DeepseekV2ForCausalLM"),
    ("glm-4.5", "Glm4MoeForCausalLM"),
    ("glm-4.6", "Glm4MoeForCausalLM"),
    ("qwen2.5-vl", "Qwen2_5_VLForConditionalGeneration"),
    ("qwen3-vl", "Qwen3VLForConditionalGeneration"),
    ("qwen3.5", "Qwen3_5MoeForConditionalGeneration"),
    ("qwen3-next", "Qwen3NextForCausalLM"),
    ("qwen3-30b-a3b", "Qwen3MoeForCausalLM"),
    ("qwen3-235b-a22b", "Qwen3MoeForCausalLM"),
    ("qwen3", "Qwen3ForCausalLM"),
    ("qwen2", "Qwen2ForCausalLM"),
    ("llama", "LlamaForCausalLM"),
    ("vicuna", "LlamaForCausalLM"),
    ("mistral-large-3", "MistralLarge3ForCausalLM"),
    ("mistral", "MistralForCausalLM"),
    ("gemma-2", "Gemma2ForCausalLM"),
    ("gemma-3", "Gemma3ForCausalLM"),
    ("grok", "Grok1ForCausalLM"),
    ("mimo", "MiMoForCausalLM"),
)


def guess_architecture(model_path: str | None) -> str | None:
    """Best guess of the HF architecture from a model path's last component (e.g. ``openai/gpt-oss-120b`` ->
    ``GptOssForCausalLM``); None when nothing matches. A guess, never a fact: callers label it as such."""
    if not model_path:
        return None
    name = model_path.rstrip("/").rsplit("/", 1)[-1].lower()
    name = re.sub(r"[_ ]", "-", name)
    for fragment, arch in _NAME_HINTS:
        if fragment in name:
            return arch
    return None


def architecture_from_config(model_config: dict | None) -> str | None:
    """``architectures[0]`` of a HF ``config.json`` dict (None when absent)."""
    if not model_config:
        return None
    archs = model_config.get("architectures") or []
    return archs[0] if archs else None
