"""Benchmark math: percentiles, repeat spread, the chain acceptance model, per-token timing, accept-length sources."""

from __future__ import annotations

import statistics

import pytest

from specdash.bench import accept_length as acc
from specdash.bench.acceptance import (
    accept_rate_from_length,
    estimate_alpha,
    expected_accept_length,
    fit_chain_model,
    low_acceptance_warning,
)
from specdash.bench.results import RequestResult
from specdash.bench.stats import Distribution, percentile, repeat_spread, standard_error_of_rate
from specdash.bench.timing import request_timings


def test_percentile_is_numpys_linear_interpolation():
    data = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0, 7.0]
    inclusive = statistics.quantiles(data, n=100, method="inclusive")  # == numpy.percentile default
    for p in (1, 50, 90, 99):
        assert percentile(data, p) == pytest.approx(inclusive[p - 1])
    assert percentile(data, 0) == 1.0 and percentile(data, 100) == 10.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(data, 101)


def test_distribution_summary():
    d = Distribution.of([10.0, 20.0, 30.0])
    assert (d.count, d.mean, d.p50, d.max) == (3, 20.0, 20.0, 30.0)
    assert d.percentiles() == {"p50": 20.0, "p90": pytest.approx(28.0), "p99": pytest.approx(29.8)}
    assert Distribution.of([]).percentiles() == {"p50": None, "p90": None, "p99": None}


def test_repeats_that_agree_are_stable_and_ones_that_disagree_are_not():
    assert not repeat_spread([100.0, 101.0, 99.5]).unstable
    assert repeat_spread([100.0, 120.0]).unstable
    # noisy runs (large within-run standard error) may differ more before being called unstable
    assert not repeat_spread([100.0, 120.0], standard_errors=[6.0, 6.0]).unstable
    assert not repeat_spread([100.0]).unstable
    s = repeat_spread([90.0, 110.0])
    assert s.range == 20.0 and s.range_pct == pytest.approx(20.0) and s.mean == 100.0


def test_standard_error_of_rate():
    assert standard_error_of_rate(100.0, [10.0, 12.0, 9.0]) == 0.0  # too few requests to estimate
    rates = [9.0, 11.0, 10.0, 10.0, 8.0, 12.0, 10.0, 10.0, 9.0]
    se = standard_error_of_rate(100.0, rates)
    assert se == pytest.approx(100.0 * (statistics.stdev(rates) / statistics.fmean(rates)) / 3.0)


def test_chain_model_matches_leviathan_formula_and_inverts():
    # k = 4 drafts, alpha = 0.8: (1 - 0.8**5) / 0.2 = 3.3616
    assert expected_accept_length(0.8, 4) == pytest.approx(3.3616)
    assert expected_accept_length(1.0, 4) == 5.0 and expected_accept_length(0.0, 4) == 1.0
    for alpha in (0.1, 0.5, 0.73, 0.95):
        assert estimate_alpha(expected_accept_length(alpha, 7), 7) == pytest.approx(alpha, abs=1e-9)
    assert estimate_alpha(0.9, 3) == 0.0 and estimate_alpha(9.0, 3) == 1.0


def test_fit_at_one_depth_predicts_others():
    # a reported run: EAGLE-3 on Llama-3.1-8B, steps 5 (6 draft tokens) accept length 4.68
    model = fit_chain_model(4.68, num_draft_tokens=6)
    assert 0.85 < model.alpha < 0.95
    assert model.predict(5).accept_length == pytest.approx(4.68, rel=1e-6)
    deeper = model.predict(8).accept_length
    # measured 5.39 at steps 8: the independent-acceptance model is in the right region (it overestimates a bit,
    # as real acceptance falls with position)
    assert 5.39 < deeper < 6.6
    assert not model.low_acceptance


def test_low_acceptance_flag():
    # the multimodal-eagle3-draft-tokens-reset case: accept length ~1.0 with 5 draft tokens -> pairing problem, not depth
    warning = low_acceptance_warning(1.05, 5)
    assert warning and "hidden-state layers, tokenizer, chat template, revision" in warning
    assert fit_chain_model(1.05, 5).low_acceptance
    assert low_acceptance_warning(1.2, 3) is None  # too few draft tokens to judge
    assert low_acceptance_warning(1.9, 4) is None  # qwen3-eagle3-accept-rate case: modest but working


def test_accept_rate_is_version_independent():
    # prefill-dominated-samples case: accept len 2.73 at 4 steps -> 0.43
    assert accept_rate_from_length(2.73, 4) == pytest.approx(0.4325)


def test_multi_token_chunks_give_one_itl_sample_per_token():
    # TTFT 100 ms with 1 token, then chunks of 3 tokens every 30 ms -> 10 ms per token
    times = [0.100, 0.130, 0.160, 0.190]
    cum = [1, 4, 7, 10]
    t = request_timings(times, cum, end_s=0.191, total_tokens=10)
    assert t.ttft_s == 0.100 and t.output_tokens == 10 and t.token_counts == "server"
    assert len(t.itl_s) == 9 and all(v == pytest.approx(0.010) for v in t.itl_s)
    assert t.tpot_s == pytest.approx((0.191 - 0.100) / 9)
    assert t.chunk_tokens == (1, 3, 3, 3)


def test_chunks_without_new_tokens_are_skipped_like_bench_serving():
    t = request_timings([0.1, 0.12, 0.13, 0.16], [1, 1, 3, 4], end_s=0.16)
    # the 0.12 chunk brings nothing: the next gap is measured from 0.10
    assert t.itl_s == pytest.approx((0.015, 0.015, 0.03))


def test_token_counts_are_estimated_when_the_server_sends_none_per_chunk():
    t = request_timings([0.1, 0.13, 0.16], [None, None, None], end_s=0.16, total_tokens=7)
    assert t.token_counts == "estimated" and t.chunk_tokens == (1, 3, 3) and len(t.itl_s) == 6


def _req(tokens, verify, ok=True):
    return RequestResult(0, "p", success=ok, output_tokens=tokens, spec_verify_ct=verify)


def test_accept_length_sources_in_order():
    # /generate meta_info: sum completion / sum verify (bench_sglang_eagle definition)
    a = acc.choose([_req(256, 101), _req(100, 40), _req(50, 5, ok=False)], None, None, None)
    assert a.source == "meta_info" and a.value == pytest.approx(356 / 141)
    # Prometheus counter deltas
    before = acc.ServerCounters(2.0, 1000.0, 500.0, {})
    after = acc.ServerCounters(2.2, 1600.0, 700.0, {})
    a = acc.choose([_req(600, None)], before, after, [9.0])
    assert a.source == "server_counters" and a.value == pytest.approx(3.0)
    # fresh server: running average absent before, present after
    a = acc.choose([], acc.ServerCounters(None, server_info={}), acc.ServerCounters(2.5, server_info={}), None)
    assert a.source == "server_info_fresh" and a.value == 2.5
    # cumulative average of an old server is NOT this run's: fall back to the log
    old = acc.ServerCounters(3.1, server_info={})
    a = acc.choose([], old, acc.ServerCounters(3.0, server_info={}), [2.0, 2.5])
    assert a.source == "log" and a.value == pytest.approx(2.25)
    a = acc.choose([], old, acc.ServerCounters(3.0, server_info={}), None)
    assert a.source == "none" and a.value is None and "cumulative" in a.note


def test_server_info_shapes_and_prometheus_counters():
    assert acc.avg_accept_length_of({"internal_states": [{"avg_spec_accept_length": 3.2}]}) == 3.2
    assert acc.avg_accept_length_of({"decode": [{"internal_states": [{"avg_spec_accept_length": 2.1}]}]}) == 2.1
    assert acc.avg_accept_length_of({"avg_spec_accept_length": 1.7}) == 1.7
    assert acc.avg_accept_length_of({"internal_states": [{}]}) is None
    text = (
        "# HELP sglang:generation_tokens_total x\n"
        'sglang:generation_tokens_total{model_name="m",tp_rank="0"} 100.0\n'
        'sglang:generation_tokens_total{model_name="m",tp_rank="1"} 50.0\n'
        'sglang:spec_verify_calls_total{model_name="m"} 60\n'
    )
    assert acc.parse_prometheus_counters(text) == (150.0, 60.0)
    assert acc.parse_prometheus_counters("") == (None, None)


@pytest.mark.parametrize(("tag", "words"), [
    ("meta_info", "per request"), ("server_counters", "server counters"),
    ("server_info_fresh", "fresh server's average"), ("log", "log, approx."), ("none", "unknown"), (None, "unknown"),
    ("meta_info+server_info_fresh", "per request + fresh server's average"), ("future_tag", "future_tag"),
])
def test_accept_length_source_in_words(tag, words):
    from specdash.bench.results import accept_source_words

    assert accept_source_words(tag) == words
