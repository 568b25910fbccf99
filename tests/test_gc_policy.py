"""The console's garbage-collector policy: full collections become rare, the young generations keep theirs."""

from __future__ import annotations

import gc

from specdash.app.gc_policy import FULL_COLLECTION_EVERY, apply_streaming_gc_policy


def test_full_collections_become_rare_and_young_thresholds_stay():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert apply_streaming_gc_policy() == (700, 10, FULL_COLLECTION_EVERY) == gc.get_threshold()
        gc.set_threshold(2000, 20, 10)  # a policy set elsewhere for the young generations is kept
        assert apply_streaming_gc_policy() == (2000, 20, FULL_COLLECTION_EVERY)
    finally:
        gc.set_threshold(*before)
