class _Registry:
    def resolve_model_cls(self, architectures):
        raise ValueError(f"Model architectures {architectures} are not supported for now.")


ModelRegistry = _Registry()
