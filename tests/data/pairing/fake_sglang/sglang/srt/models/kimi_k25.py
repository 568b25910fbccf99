from typing import List, Optional

from sglang.srt.models.deepseek_v2 import DeepseekV3ForCausalLM


class KimiK25ForConditionalGeneration:
    def __init__(self, config, quant_config=None, prefix=""):
        self.config = config
        self.language_model = None
        if config.text_config is not None:
            self.language_model = DeepseekV3ForCausalLM(
                config.text_config, quant_config=quant_config, prefix="language_model"
            )

    def set_eagle3_layers_to_capture(
        self, layer_ids: Optional[List[int]] = None
    ) -> None:
        """Set the layers to capture for EAGLE3 speculative decoding."""
        if self.language_model is None or not hasattr(
            self.language_model, "set_eagle3_layers_to_capture"
        ):
            raise AttributeError(
                "language_model does not support EAGLE3 speculative decoding."
            )

        self.language_model.set_eagle3_layers_to_capture(layer_ids)


EntryClass = [KimiK25ForConditionalGeneration]
