from typing import List, Optional


class Llama4ForConditionalGeneration:
    def __init__(self, config, quant_config=None, prefix=""):
        self.config = config
        # Initialize the language model
        from sglang.srt.models.llama4 import Llama4ForCausalLM

        self.language_model = Llama4ForCausalLM(
            config.text_config if hasattr(config, "text_config") else config,
            quant_config=quant_config,
            prefix="language_model",
        )

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        if hasattr(self.language_model, "set_eagle3_layers_to_capture"):
            self.language_model.set_eagle3_layers_to_capture(layer_ids)


EntryClass = Llama4ForConditionalGeneration
