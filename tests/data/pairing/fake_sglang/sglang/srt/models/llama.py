from typing import List, Optional


class LlamaModel:
    def forward(self, positions, hidden_states, forward_batch):
        for i in range(self.start_layer, self.end_layer):
            capture = i in self.layers_to_capture  # boundary i = input of layer i
        return hidden_states


class LlamaForCausalLM:
    def __init__(self, config):
        raise RuntimeError("the probe must not construct models")

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        if not self.pp_group.is_last_rank:
            return

        if layer_ids is None:
            self.capture_aux_hidden_states = True
            num_layers = self.config.num_hidden_layers
            self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]
        else:
            self.capture_aux_hidden_states = True
            # we plus 1 here because in sglang, for the ith layer, it takes the output
            # of the (i-1)th layer as aux hidden state
            self.model.layers_to_capture = [val + 1 for val in layer_ids]


class Phi3ForCausalLM(LlamaForCausalLM):
    pass


EntryClass = [LlamaForCausalLM, Phi3ForCausalLM]
