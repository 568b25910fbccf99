"""How often Python's cyclic garbage collector may stop the console for a full collection.

A busy server log makes the console allocate ~12 000 decode samples a second that live just long enough (the
5 000-sample metrics window) to be promoted to the oldest generation, so CPython's default policy ran a full
collection every few seconds. Each one stops the app for 100–190 ms on a 2-core machine (~80 000 tracked objects:
Textual's widgets and caches, the samples), long enough to delay a key press past 100 ms
(benchmarks/bench_log_pane.py, measured with ``gc.callbacks``). Nearly all of the console's garbage is freed by
reference counting the moment it is dropped; the collector is only needed for reference cycles, which are rare
here, so full collections can be much rarer at no real cost in memory.
"""

from __future__ import annotations

import gc

#: Young-generation collections between two full collections (CPython's default is 10). With the default young
#: thresholds a full collection then runs about once a minute under a 20 000 lines/s stream, instead of every few
#: seconds; the young generations keep their defaults (700, 10).
FULL_COLLECTION_EVERY = 1000


def apply_streaming_gc_policy() -> tuple[int, int, int]:
    """Make full garbage collections rare (see the module docstring); returns the thresholds now in force
    (``gc.get_threshold()``). Process-wide and idempotent; the generation-0 and -1 thresholds are kept."""
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, FULL_COLLECTION_EVERY)
    return gc.get_threshold()
