"""Run SGLang's ``bench_serving`` against a loopback server and print its figures and its CPU time as one JSON line.

Runs under a Python that has SGLang's benchmark installed (``python -m sglang.bench_serving`` imports): aiohttp,
numpy, transformers, tqdm. Not run by specdash's tests; ``bench_vs_bench_serving.py`` starts it.

* ``datasets`` (Hugging Face) is only needed by bench_serving's dataset loaders we do not use (MMMU, LongBench):
  a stand-in module is installed when the real one is missing; its ``load_dataset`` raises.
* The tokenizer is a small local word-level one built here (``--dataset-name random-ids`` draws token ids from its
  vocabulary and decodes them into the prompt; the retokenised output counts use it too): no download.
* CPU: ``time.process_time()`` from the start of bench_serving's ``benchmark()`` coroutine to the call of its
  ``calculate_metrics`` (the request phase: the same span specdash's overhead benchmark measures for its own
  client), printed as ``cpu_s``.

Usage: ``SGLANG_PYTHON benchmarks/bench_serving_driver.py URL CONCURRENCY NUM_PROMPTS OUTPUT_LEN``; prints
``{"cpu_s", "wall_s", "completed", "total_output_tokens", "median_ttft_ms", "median_itl_ms", "mean_itl_ms",
"ttfts_ms", "itls_ms", "requests"}``; ``requests``: per successful request its ``rid`` (the first word of its text:
the server's request id when it tags its text), ``start`` (``time.perf_counter()`` when bench_serving started it),
``ttft`` and ``itl`` (seconds).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import types


def _stand_in_datasets() -> None:
    try:
        import datasets  # noqa: F401
    except ImportError:
        module = types.ModuleType("datasets")

        def load_dataset(*args, **kwargs):
            raise RuntimeError("the Hugging Face 'datasets' package is not installed (stand-in module)")

        module.load_dataset = load_dataset  # type: ignore[attr-defined]
        sys.modules["datasets"] = module


def _tokenizer(folder: str) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, **{f"w{i}": i + 1 for i in range(2000)}, **{f"t{i}": 2001 + i for i in range(1, 9000)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")
    fast.save_pretrained(folder)
    return folder


def main(argv: list[str]) -> int:
    """Run bench_serving with the tokenizer and its output file in a temporary folder, removed afterwards."""
    _stand_in_datasets()
    with tempfile.TemporaryDirectory(prefix="bench-tokenizer-") as folder:
        return _run(argv, _tokenizer(folder))


def _run(argv: list[str], folder: str) -> int:
    url, concurrency, num_prompts, output_len = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
    from sglang.benchmark import serving

    marks: dict[str, float] = {}
    original_benchmark = serving.benchmark
    original_metrics = serving.calculate_metrics

    async def benchmark(*args, **kwargs):
        marks["cpu0"], marks["wall0"] = time.process_time(), time.perf_counter()
        return await original_benchmark(*args, **kwargs)

    requests: list[dict] = []

    def calculate_metrics(*args, **kwargs):
        marks.setdefault("cpu1", time.process_time())
        marks.setdefault("wall1", time.perf_counter())
        outputs = kwargs.get("outputs", args[1] if len(args) > 1 else [])
        for out in outputs:
            words = (out.generated_text or "").split()
            if out.success and words:
                requests.append({"rid": words[0], "start": out.start_time, "ttft": out.ttft, "itl": list(out.itl)})
        return original_metrics(*args, **kwargs)

    serving.benchmark = benchmark
    serving.calculate_metrics = calculate_metrics
    out_file = os.path.join(folder, "out.jsonl")
    sys.argv = [
        "bench_serving", "--backend", "sglang", "--base-url", url, "--dataset-name", "random-ids",
        "--tokenizer", folder, "--model", folder, "--num-prompts", str(num_prompts),
        "--max-concurrency", str(concurrency), "--random-input-len", "16", "--random-output-len", str(output_len),
        "--random-range-ratio", "1", "--warmup-requests", "0", "--output-file", out_file, "--output-details",
        "--disable-tqdm", "--seed", "1",
    ]
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - bench_serving prints its own table
    try:
        serving.cli_main()
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    with open(out_file) as f:
        res = json.loads(f.read().splitlines()[-1])
    itls = [v * 1000.0 for itl in res.get("itls", []) for v in itl]
    print(json.dumps({
        "cpu_s": marks["cpu1"] - marks["cpu0"],
        "wall_s": marks["wall1"] - marks["wall0"],
        "completed": res["completed"],
        "total_output_tokens": res["total_output_tokens"],
        "median_ttft_ms": res["median_ttft_ms"],
        "median_itl_ms": res["median_itl_ms"],
        "mean_itl_ms": res["mean_itl_ms"],
        "ttfts_ms": [v * 1000.0 for v in res.get("ttfts", [])],
        "itls_ms": itls,
        "requests": requests,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
