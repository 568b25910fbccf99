"""Architecture strings: which target classes SGLang captures EAGLE-3 hidden states for (and with which id rule),
and which draft classes SGLang loads for each speculative algorithm.

Source of the target table: the ``set_eagle3_layers_to_capture`` method reached through each ``EntryClass`` of
``python/sglang/srt/models/*.py`` in the sglang 0.5.23 wheel (resolved through the class bases). Rule families:

* ``plus_one``  — ids x ⇒ boundaries x+1 ("for the ith layer, it takes the output of the (i-1)th layer"), default
  [2, N//2, N−3]; llama.py, qwen2/3.py, qwen3_moe.py, glm4_moe.py, minimax_m2.py, … (all versions).
* ``first_id``  — DeepSeek-V2 family (DeepSeek-V3/V3.2, Kimi-K2/K2.5 text model, GLM-MoE-DSA, Glm4MoeLite,
  MistralLarge3): since PR #25454 ids are shifted by +1 only when the first id is 1, else used as boundaries;
  before it, ``plus_one``. (deepseek_v2.py; first seen in the 0.5.13 wheel, absent from 0.5.12.post1.)
* ``gpt_oss``   — gpt_oss.py: since PR #32334 ids are kept as boundaries when ``max(ids) == N`` (the final boundary
  N is capturable), else shifted by +1; before it, ``plus_one`` with N unreachable. (first seen in the 0.5.17
  wheel, absent from 0.5.16.)
* ``plus_one_all`` — minimax_m3_vl.py: +1 applied to the default too, default boundaries [3, N//2+1, N−2].
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: Target architecture (``architectures[0]``) → id-rule family, from the sglang 0.5.23 wheel.
TARGET_CAPTURE_FAMILY: dict[str, str] = {
    **dict.fromkeys(
        [
            "LlamaForCausalLM", "Llama4ForCausalLM", "Llama4ForConditionalGeneration", "MistralForCausalLM",
            "Ministral3ForCausalLM", "Phi3ForCausalLM", "InternLM3ForCausalLM", "IQuestCoderForCausalLM",
            "TeleFLMForCausalLM", "ApertusForCausalLM", "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM",
            "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
            "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
            "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration", "Qwen4ExpForConditionalGeneration", "MellumForCausalLM",
            "Cosmos3ForConditionalGeneration", "InternS1ProForConditionalGeneration",
            "InternS2MobiusForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
            "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM",
            "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration", "Glm4MoeForCausalLM",
            "Glm5NextForConditionalGeneration", "MiniMaxM2ForCausalLM", "MiniMaxM3SparseForCausalLM",
            "BailingMoEForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "SarvamMoEForCausalLM",
            "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM", "LongcatFlashForCausalLM",
        ],
        "plus_one",
    ),
    **dict.fromkeys(
        [
            "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
            "KimiK25ForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM",
            "MistralLarge3ForCausalLM",
        ],
        "first_id",
    ),
    "GptOssForCausalLM": "gpt_oss",
    "MiniMaxM3SparseForConditionalGeneration": "plus_one_all",
}

#: Text-model ``model_type`` → family, for targets whose ``architectures`` is missing or unknown.
MODEL_TYPE_FAMILY: dict[str, str] = {
    "llama": "plus_one", "qwen2": "plus_one", "qwen3": "plus_one", "qwen3_moe": "plus_one", "mistral": "plus_one",
    "deepseek_v2": "first_id", "deepseek_v3": "first_id", "kimi_k2": "first_id", "gpt_oss": "gpt_oss",
}

#: EAGLE-3 draft classes SGLang registers (llama_eagle3.py, kimi_k25_eagle3.py).
EAGLE3_DRAFT_ARCHS: frozenset[str] = frozenset({"LlamaForCausalLMEagle3", "Eagle3DeepseekV2ForCausalLM"})
#: Seen in some builds only (not confirmed in every build).
EAGLE3_DRAFT_ARCHS_SOME_BUILDS: frozenset[str] = frozenset({"Eagle3DeepseekV3ForCausalLM"})
#: EAGLE(-2) draft classes (llama_eagle.py, qwen2_eagle.py, mistral_eagle.py, mistral_large_3_eagle.py).
EAGLE_DRAFT_ARCHS: frozenset[str] = frozenset(
    {"LlamaForCausalLMEagle", "Qwen2ForCausalLMEagle", "MistralForCausalLMEagle", "MistralLarge3ForCausalLMEagle"}
)
#: EAGLE-3 names other engines use that SGLang does not register (vLLM, speculators; PR #24077 open).
FOREIGN_EAGLE3_ARCHS: dict[str, str] = {
    "Eagle3LlamaForCausalLM": "vLLM's class name",
    "Eagle3Speculator": "the vLLM speculators format",
    "LlamaForCausalLM": "a SafeAILab/EAGLE checkpoint's name (needs a repackaged copy, PR #33966 open)",
}


def looks_eagle3_arch(arch: str | None) -> bool:
    """True for any architecture string naming an EAGLE-3 draft (SGLang's, vLLM's or speculators')."""
    return arch is not None and ("eagle3" in arch.lower() or arch == "Eagle3Speculator")


@functools.lru_cache(maxsize=1)
def archs_without_eagle3_hook() -> frozenset[str]:
    """Registered SGLang 0.5.23 architectures that have no ``set_eagle3_layers_to_capture`` (EAGLE3 on such a
    target raises ``ValueError: Model <cls> does not implement set_eagle3_layers_to_capture ...``)."""
    data = json.loads((Path(__file__).with_name("no_eagle3_hook_0_5_23.json")).read_text())
    return frozenset(data["architectures"])


def capture_family(architecture: str | None, text_model_type: str | None = None) -> str | None:
    """Rule family (``plus_one``, ``first_id``, ``gpt_oss``, ``plus_one_all``) of a target, or None when unknown."""
    if architecture in TARGET_CAPTURE_FAMILY:
        return TARGET_CAPTURE_FAMILY[architecture]
    if architecture and architecture in archs_without_eagle3_hook():
        return None
    return MODEL_TYPE_FAMILY.get(text_model_type or "")
