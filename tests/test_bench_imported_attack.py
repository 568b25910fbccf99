"""Adversarial and real-looking benchmark pastes: what the user reads must be what the text supports."""

from __future__ import annotations

from specdash.bench.imported import find_results
from specdash.bench.imported.report import result_text


def only(text: str):
    results = find_results(text)
    assert len(results) == 1, [r.tool for r in results]
    return results[0]


def test_table_request_throughput_column_is_not_read_as_tokens_per_second():
    text = ("| Config | Throughput (req/s) | TPOT (ms) |\n|---|---|---|\n"
            "| baseline | 4.10 | 12.00 |\n| steps 3 | 5.20 | 9.00 |\n")
    result = only(text)
    shown = result_text(result)
    assert "4.10 tok/s" not in shown and "5.20 tok/s" not in shown
    assert "request throughput 5.20 req/s" in shown
    assert [r.metrics.get("output_tokens_per_s") for r in result.records] == [None, None]


def test_table_median_tpot_column_is_not_called_a_mean():
    text = ("| steps | topk | draft tokens | Median TPOT (ms) | Median TTFT (s) |\n|---|---|---|---|---|\n"
            "| 3 | 1 | 4 | 9.00 | 0.12 |\n")
    shown = result_text(only(text))
    assert "TPOT mean" not in shown and "TTFT mean" not in shown
    assert "TPOT median 9.00 ms" in shown
    assert "TTFT median 120" in shown
