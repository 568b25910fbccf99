from typing import List, Optional


class GptOssModel:
    def forward(self, positions, hidden_states, forward_batch):
        for i in range(self.start_layer, self.end_layer):
            capture = i in self.layers_to_capture
        if self.end_layer in self.layers_to_capture:  # final boundary, before the norm
            pass
        return hidden_states


class GptOssForCausalLM:
    def __init__(self, config):
        raise RuntimeError("the probe must not construct models")

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        if not self.pp_group.is_last_rank:
            return

        num_layers = self.config.num_hidden_layers
        if layer_ids is None:
            self.capture_aux_hidden_states = True
            self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]
        else:
            self.capture_aux_hidden_states = True
            # Preserve IDs that already include the final hidden-state
            # boundary; otherwise retain the legacy output-layer conversion.
            if layer_ids and max(layer_ids) == num_layers:
                self.model.layers_to_capture = list(layer_ids)
            else:
                self.model.layers_to_capture = [val + 1 for val in layer_ids]


EntryClass = GptOssForCausalLM
