from sglang.srt.models.llama import LlamaForCausalLM


class Llama4ForCausalLM(LlamaForCausalLM):
    pass


EntryClass = [Llama4ForCausalLM]
