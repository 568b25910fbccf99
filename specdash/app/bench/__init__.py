"""The benchmarks pane: one-key benchmark of the running server and the speculative depth sweep."""

from specdash.app.bench.pane import BenchPane

__all__ = ["BenchPane"]
