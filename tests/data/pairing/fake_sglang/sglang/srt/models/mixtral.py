class MixtralForCausalLM:
    def __init__(self, config):
        raise RuntimeError("the probe must not construct models")


EntryClass = MixtralForCausalLM
