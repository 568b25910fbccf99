# In sglang 0.5.23 this file defines a model-level class named Qwen3_5ForCausalLM too; the registered one (the
# EntryClass) lives in qwen3_5_text.py.


class Qwen3_5ForCausalLM:
    def set_eagle3_layers_to_capture(self, layers_to_capture: list[int]):
        self.layers_to_capture = layers_to_capture
        for layer_id in self.layers_to_capture:
            setattr(self.layers[layer_id], "_is_layer_to_capture", True)


class Qwen3_5ForConditionalGeneration:
    pass


EntryClass = [Qwen3_5ForConditionalGeneration]
