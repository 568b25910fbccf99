from typing import Optional

from sglang.srt.runtime_context import get_parallel


class MiniMaxM2ForCausalLM:
    def __init__(self, config):
        raise RuntimeError("the probe must not construct models")

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[list[int]] = None):
        if not get_parallel().pp_group.is_last_rank:
            return
        self.capture_aux_hidden_states = True
        if layer_ids is None:
            num_layers = self.config.num_hidden_layers
            self.model.layers_to_capture = [
                2,
                num_layers // 2,
                num_layers - 3,
            ]  # Specific layers for EAGLE3 support
        else:
            self.model.layers_to_capture = [val + 1 for val in layer_ids]


EntryClass = MiniMaxM2ForCausalLM
