def get_parallel():
    raise RuntimeError("the parallel context is not initialised (no distributed setup in a probe)")
