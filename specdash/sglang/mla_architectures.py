"""Target architectures whose attention is MLA (multi-head latent attention): SGLang's ``use_mla_backend``
(``python/sglang/srt/configs/model_config.py``), DeepSeek V2/V3 and their relatives.

A module of its own so that the known-issue table (which the log pane loads before the console's first frame) can
name them without loading the rule engine of :mod:`specdash.sglang.rules.backends`, which uses them too.
"""

from __future__ import annotations

#: The ``architectures[0]`` names of the targets SGLang runs with an MLA attention backend.
MLA_ARCHITECTURES = frozenset({"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                               "DeepseekV4ForCausalLM", "KimiK25ForConditionalGeneration", "Glm4MoeLiteForCausalLM",
                               "MistralLarge3ForCausalLM"})
