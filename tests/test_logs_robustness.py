"""What real logs contain and a parser must survive: tqdm \\r storms, ANSI colour codes, 100 000+ character lines,
invalid UTF-8, NUL bytes."""

from __future__ import annotations

import pytest

from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.parser import MAX_TEXT_CHARS, LineKind, LogParser

DECODE = ("[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 108, token usage: 0.00, accept len: 2.17, "
          "accept rate: 0.54, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, ")


def test_tqdm_carriage_return_storm_keeps_only_the_last_state():
    states = [f"Capturing batches (bs={48 - i} avail_mem=14.{i:02d} GB): {i * 10}%|{'█' * i}{' ' * (10 - i)}| "
              f"{i}/10 [00:0{i}<00:{10 - i:02d},  1.52it/s]" for i in range(11)]
    storm = "\r".join(states * 500) + "\r"  # thousands of updates, no newline until the end
    parser = LogParser()
    parser.feed("[2025-08-12 16:02:26] Capture cuda graph begin. This can take up to several minutes. avail mem=14.77 GB")
    p = parser.feed(storm)
    assert p.kind is LineKind.graph_progress
    assert "\r" not in p.text and p.text == states[-1]
    assert (p.info["done"], p.info["total"], p.info["bs"]) == (10, 10, 38)


def test_crlf_line_ending_is_not_a_storm():
    p = LogParser().feed(DECODE + "\r")
    assert p.kind is LineKind.decode and not p.text.endswith("\r")


def test_ansi_colour_codes_are_removed_and_do_not_hide_the_kind():
    coloured = "\x1b[33m\x1b[1mspeculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when " \
               "speculative_eagle_topk == 1\x1b[0m"
    p = LogParser().feed(coloured)
    assert p.kind is LineKind.override
    assert "\x1b" not in p.text and p.text.startswith("speculative_num_draft_tokens")
    q = LogParser().feed("\x1b[32m" + DECODE + "\x1b[0m")
    assert q.kind is LineKind.decode and q.record.accept_len == 2.17


@pytest.mark.timeout(20)
def test_line_of_200k_characters_is_capped_and_still_classified():
    huge = DECODE + "x" * 200_000
    p = LogParser().feed(huge)
    assert p.kind is LineKind.decode and p.record.running_reqs == 1
    assert p.truncated
    assert len(p.text) <= MAX_TEXT_CHARS + 40 and p.text.endswith("chars]")
    assert len(p.raw) < 10_000


@pytest.mark.timeout(20)
def test_pathological_long_lines_without_structure_do_not_hang():
    parser = LogParser()
    for line in ("a" * 150_000, "[" * 150_000, "Traceback " * 20_000, "accept len: " * 10_000, "%|" * 60_000,
                 "File \"" * 30_000, " " * 150_000 + "Error", "x: y, " * 30_000):
        p = parser.feed(line)
        assert p.text and len(p.text) <= MAX_TEXT_CHARS + 40


def test_invalid_utf8_decoded_with_replacement_and_lone_surrogates():
    raw = b"[2025-04-02 09:14:55] The server is fired up \xff\xfe and ready to roll!"
    p = LogParser().feed(raw.decode("utf-8", "replace"))
    assert "\ufffd" in p.text
    # surrogateescape (what Host.read_file produces) must not reach the screen as unencodable text
    q = LogParser().feed(b"Overlap scheduler is disabled \xff because of using eagle".decode("utf-8", "surrogateescape"))
    q.text.encode("utf-8")  # would raise on a lone surrogate
    assert q.kind is LineKind.override


def test_nul_bytes_and_control_characters_are_stripped():
    p = LogParser().feed("[2025-04-02 09:14:55] The server is fired up and ready to roll!\x00\x00\x07")
    assert p.kind is LineKind.ready and "\x00" not in p.text and "\x07" not in p.text
    q = LogParser().feed("\x00\x00\x00")
    assert q.kind is LineKind.plain and q.text == ""
    r = LogParser().feed("\tindented\twith tabs")
    assert "\t" not in r.text


def test_analyzer_survives_every_bad_input_in_one_stream():
    analyzer = LogAnalyzer()
    lines = ["\x1b[31m" + "x" * 120_000, "\r".join(["10%|█| 1/10 [00:01<00:09]"] * 1000), "\x00" * 50,
             b"\xc3\x28 bad".decode("utf-8", "replace"), DECODE, "", "[", "[2025-13-45 99:99:99] not a date"]
    parsed = analyzer.feed_many(lines)
    assert len(parsed) == len(lines)
    assert parsed[4].kind is LineKind.decode
    assert parsed[7].timestamp is None  # an impossible date is not a timestamp
    assert analyzer.metrics.total_samples == 1
