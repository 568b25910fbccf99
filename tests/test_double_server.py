"""The SGLang test double behaves like an SGLang host: flags, start-up log, HTTP API, workers, GPU memory, crash.

Real processes launched through specdash.server.launch on LocalHost; real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import re

import httpx
import pytest
from support.double import harness
from support.guard import guard

from specdash.hosts.local import LocalHost
from specdash.server import ServerState, launch, server_status, stop, wait_for_state

pytestmark = pytest.mark.timeout(60)

READY = frozenset({ServerState.READY, ServerState.CRASHED, ServerState.STOPPED})


async def _sse_events(client: httpx.AsyncClient, url: str, body: dict) -> list:
    events = []
    async with client.stream("POST", url, json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        async for line in resp.aiter_lines():
            if line.startswith("data: "):
                data = line[len("data: "):]
                events.append(data if data == "[DONE]" else json.loads(data))
    return events


async def _ready_then_one_stream(host, command: str, started_groups, port: int, max_new_tokens: int,
                                 info_path: str) -> tuple:
    """Launch ``command``, wait until ready, stream one ``/generate`` of ``max_new_tokens``; return the launch handle,
    the SSE events, ``info_path``'s JSON (a server-info endpoint) and the accept lengths the log's decode lines show."""
    handle = await launch(host, command)
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY, status.describe()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10) as client:
        events = await _sse_events(client, "/generate", {"text": "Hi", "stream": True,
                                                         "sampling_params": {"max_new_tokens": max_new_tokens}})
        info = (await client.get(info_path)).json()
    log = pathlib.Path(handle.log_path).read_text()
    return handle, events, info, [float(v) for v in re.findall(r"accept len: ([\d.]+)", log)]


async def test_unknown_flag_is_rejected_with_argparse_text(tmp_path):
    host = LocalHost(env=harness.double_env(tmp_path, "fast"))
    result = await host.run("python3 -m sglang.launch_server --model-path /m --speculative-model x "
                            "--num-speculative-tokens 3", timeout_s=20)
    assert result.exit_status == 2
    assert "launch_server.py: error: unrecognized arguments: --speculative-model x --num-speculative-tokens 3" \
        in result.stderr


@pytest.mark.parametrize(
    ("era", "args", "message"),
    [
        ("0.5.0", "--speculative-algorithm eagle3",
         "argument --speculative-algorithm: invalid choice: 'eagle3'"),
        ("0.5.9", "--speculative-draft /d",
         "ambiguous option: --speculative-draft could match"),
    ],
)
async def test_flag_errors_follow_the_scripted_version(tmp_path, era, args, message):
    scenario = tmp_path / "era.yaml"
    scenario.write_text(f'era: "{era}"\n')
    host = LocalHost(env=harness.double_env(tmp_path, str(scenario)))
    result = await host.run(f"python3 -m sglang.launch_server --model-path /m {args}", timeout_s=20)
    assert result.exit_status == 2
    assert message in result.stderr


async def test_start_up_log_http_api_workers_and_clean_stop(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "fast")
    host = LocalHost(env=env)
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port))
    started_groups.append(handle.pgid)

    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY, status.describe()

    log = pathlib.Path(handle.log_path).read_text()
    lines = log.replace("\r", "\n").splitlines()
    # scripted warnings come first, bare (printed before logging is configured in 0.5.x)
    assert lines[0] == "Overlap scheduler is disabled because of using eagle speculative decoding."
    assert lines[1] == "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
    order = [
        "] server_args=ServerArgs(model_path='/models/Llama-3.1-8B-Instruct'",
        "] Load weight begin. avail mem=79.19 GB",
        "] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16,",
        "] Load weight end. type=LlamaForCausalLMEagle3,",
        "] KV Cache is allocated. #tokens: 354112, K size:",
        "] Capture cuda graph begin. This can take up to several minutes. avail mem=",
        "] Capture cuda graph bs [1, 2, 4, 8]",
        "Capturing batches (bs=1 avail_mem=",
        "] Capture cuda graph end. Time elapsed:",
        "] Capture draft cuda graph begin.",
        "] max_total_num_tokens=354112, chunked_prefill_size=8192,",
        f"] INFO:     Uvicorn running on http://127.0.0.1:{port} (Press CTRL+C to quit)",
        "] The server is fired up and ready to roll!",
    ]
    positions = [next(i for i, line in enumerate(lines) if needle in line) for needle in order]
    assert positions == sorted(positions)
    assert "speculative_num_draft_tokens=4" in lines[positions[0]]  # the scripted post-rewrite value
    assert re.search(r"Capturing batches \(bs=1 avail_mem=\d+\.\d\d GB\): 100%\|█{10}\| 4/4 \[", log)
    assert re.match(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] Load weight begin", lines[positions[1]])

    # workers with SGLang's titles, in the server's process group, holding GPU memory in the fake nvidia-smi state
    members = {pid: harness.proc_info(pid) for pid in harness.pids_in_group(handle.pgid)}
    titles = {info["args"]: pid for pid, info in members.items() if info}
    assert "sglang::scheduler_TP0" in titles and "sglang::detokenizer" in titles
    scheduler = titles["sglang::scheduler_TP0"]
    held = {p["pid"]: p for p in harness.gpu_processes(env)}
    assert held[scheduler]["gpu_index"] == 0
    assert held[scheduler]["used_mib"] >= 15462 + 942 + 44257  # weights + draft + KV cache
    assert titles["sglang::detokenizer"] not in held

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10) as client:
        models = (await client.get("/v1/models")).json()
        assert models["data"][0]["id"] == "/models/Llama-3.1-8B-Instruct"
        info = (await client.get("/get_server_info")).json()
        assert info["version"] == "0.5.0rc0"
        assert info["speculative_algorithm"] == "EAGLE3" and info["speculative_num_draft_tokens"] == 4
        assert (await client.get("/server_info")).status_code == 404  # 0.5.x has only /get_server_info

        events = await _sse_events(client, "/v1/completions", {
            "model": "default", "prompt": "The capital of France is", "max_tokens": 24, "stream": True,
            "stream_options": {"include_usage": True}})
        assert events[-1] == "[DONE]"
        assert events[-2]["choices"] == [] and events[-2]["usage"]["completion_tokens"] == 24
        texts = [e["choices"][0]["text"] for e in events[:-2] if e["choices"]]
        assert max(len(t.split()) for t in texts) >= 2  # several tokens per chunk when speculative
        assert len("".join(texts).split()) == 24

        chat = await _sse_events(client, "/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 60, "stream": True})
        assert chat[0]["choices"][0]["delta"]["role"] == "assistant"
        assert chat[-2]["choices"][0]["finish_reason"] == "length" and chat[-1] == "[DONE]"

        gen = (await client.post("/generate", json={"text": "Hello", "sampling_params": {"max_new_tokens": 40}})).json()
        meta = gen["meta_info"]
        assert meta["completion_tokens"] == 40 and meta["finish_reason"] == {"type": "length", "length": 40}
        assert 10 <= meta["spec_verify_ct"] < 40 and meta["e2e_latency"] > 0

    log = pathlib.Path(handle.log_path).read_text()
    decode = [line for line in log.splitlines() if "Decode batch." in line]
    assert decode, "decode lines are written while requests run"
    assert re.search(r"\] Decode batch\. #running-req: 1, #token: \d+, token usage: 0\.00, accept len: 2\.(86|41), "
                     r"cuda graph: True, gen throughput \(token/s\): (1122\.58|980\.10), #queue-req: 0, $", decode[0])
    assert '"POST /v1/completions HTTP/1.1" 200 OK' in log

    result = await stop(host, handle, grace_s=10)
    assert result.gone and result.signals == ("SIGTERM",)
    assert harness.pids_in_group(handle.pgid) == []
    leftovers = {pid: harness.proc_info(pid) for pid in members}
    assert all(i is None or i["state"] == "Z" for i in leftovers.values()), leftovers
    assert harness.gpu_processes(env) == []  # memory released on a clean exit
    assert (await server_status(host, handle)).state is ServerState.STOPPED


async def test_crash_leaves_orphans_holding_gpu_memory(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "crash_orphan")
    host = LocalHost(env=env)
    handle = await launch(host, harness.launch_command(harness.free_port()))
    started_groups.append(handle.pgid)

    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.CRASHED
    assert status.exit_status == 1
    assert "torch.OutOfMemoryError: CUDA out of memory" in status.detail

    log = pathlib.Path(handle.log_path).read_text()
    assert re.search(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] Scheduler hit an exception: Traceback", log, re.M)
    assert "Received sigquit from a child process. It usually means the child failed." in log
    assert "fired up" not in log

    for _ in range(100):  # the launch wrapper exits right after recording the exit status
        orphans = {pid: harness.proc_info(pid) for pid in harness.pids_in_group(handle.pgid)}
        titles = {info["args"]: pid for pid, info in orphans.items() if info}
        if len(titles) == 2:
            break
        await asyncio.sleep(0.02)
    assert set(titles) == {"sglang::scheduler_TP0", "sglang::detokenizer"}
    assert set(orphans) <= set(status.alive_pids)
    launcher_pids = {info["ppid"] for info in orphans.values()}
    assert all(harness.proc_info(ppid) is None or not harness.proc_info(ppid)["args"].startswith("python3 -m sglang")
               for ppid in launcher_pids)  # the launcher is gone: they were reparented (PID 1 or a subreaper)
    held = {p["pid"]: p["used_mib"] for p in harness.gpu_processes(env)}
    assert held[titles["sglang::scheduler_TP0"]] >= 15462 + 942 + 44257

    await asyncio.sleep(0.3)  # orphans do not die on their own
    assert set(harness.pids_in_group(handle.pgid)) == set(orphans)

    harness.kill_group(handle.pgid)  # we started them: clean up by process group
    assert harness.pids_in_group(handle.pgid) == []


async def test_2026_era_sglang_serve_with_tensor_parallel(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "era_2026", gpus=2)
    host = LocalHost(env=env)
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port, launcher="sglang serve", extra="--tp 2"))
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY, status.describe()
    assert status.probe.server_info_path == "/server_info"
    assert status.probe.server_info["version"] == "0.5.11.dev0"

    titles = {harness.proc_info(pid)["args"]: pid for pid in harness.pids_in_group(handle.pgid)}
    held = {p["pid"]: p["gpu_index"] for p in harness.gpu_processes(env)}
    assert held[titles["sglang::scheduler_TP0"]] == 0 and held[titles["sglang::scheduler_TP1"]] == 1

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10) as client:
        events = await _sse_events(client, "/generate", {"text": "Hi", "stream": True,
                                                         "sampling_params": {"max_new_tokens": 30}})
        final = events[-2]["meta_info"]
        assert final["completion_tokens"] == 30 and final["spec_accept_length"] == pytest.approx(30 / final["spec_verify_ct"])
        assert (await client.get("/get_server_info")).status_code == 200

    log = pathlib.Path(handle.log_path).read_text()
    assert re.search(r"^\[[\d\- :]+\] Max running requests is reset to 48", log, re.M)  # timestamped in 2026
    assert re.search(r"^\[[\d\- :]+ TP0\] Capture target verify CUDA graph begin\. backend=full, "
                     r"num_tokens_per_req=4, bs=\[1, 2, 3, 4, 5, 6\], avail mem=", log, re.M)
    assert re.search(r" TP0\] Decode batch, #running-req: 1, #token: \d+, token usage: 0\.00, accept len: 3\.12, "
                     r"accept rate: 0\.78, cuda graph: True, gen throughput \(token/s\): 1873\.40, #queue-req: 0$", log, re.M)
    assert "Endpoint '/get_server_info' is deprecated" in log

    result = await stop(host, handle, grace_s=10)
    assert result.gone and harness.gpu_processes(env) == []


async def test_crash_without_orphans_takes_its_children_down(tmp_path, started_groups):
    scenario = tmp_path / "crash.json"  # JSON is accepted too
    scenario.write_text(json.dumps({
        "phases_s": {"args": 0.05, "weights": 0.3},
        "crash": {"phase": "weights", "after_s": 0.1, "exit_code": 3, "orphan_children": False,
                  "text": "[{ts}{prefix}] Scheduler hit an exception: Traceback (most recent call last):\n"
                          "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."},
    }))
    env = harness.double_env(tmp_path, str(scenario))
    host = LocalHost(env=env)
    handle = await launch(host, harness.launch_command(harness.free_port(), spec=False))
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.CRASHED and status.exit_status == 3
    # the children follow the main process down within moments (read right at the exit, one may still be alive)
    deadline = asyncio.get_running_loop().time() + 10
    while status.alive_pids and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
        status = await server_status(host, handle)
    assert status.state is ServerState.CRASHED and status.alive_pids == ()
    assert status.detail == ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                             "(exit status 3)")
    assert harness.pids_in_group(handle.pgid) == []
    assert harness.gpu_processes(env) == []


@pytest.mark.parametrize(("extra", "spec", "possible"), [
    # steps 1: SGLang verifies at most 1 draft token + the bonus token, whatever the scenario scripted (2.86)
    ("--speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2", True, 2),
    ("", False, None),  # no speculation: no accept length anywhere
])
async def test_accept_lengths_are_possible_for_the_configuration_run(tmp_path, started_groups, extra, spec, possible):
    scenario = tmp_path / "deep.yaml"  # the accept length of a deeper configuration: 2.86 = 1 + 0.62 * 3
    scenario.write_text('era: "0.5.9"\ndecode: {accept_len: [2.86], accept_rate: [0.62], log_interval_s: 0.1}\n')
    env = harness.double_env(tmp_path, str(scenario))
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port, spec=False, extra=(
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B " + extra)
        if spec else "")
    _, events, info, logged = await _ready_then_one_stream(host, command, started_groups, port, 60, "/get_server_info")
    final = events[-2]["meta_info"]
    info = info["internal_states"][0]
    if spec:
        assert logged and all(v == pytest.approx(1 + 0.62 * (possible - 1)) for v in logged)  # 1.62 of 2
        assert final["spec_accept_length"] <= possible and info["avg_spec_accept_length"] <= possible
    else:
        assert logged == [] and "spec_accept_length" not in final and "spec_verify_ct" not in final
        assert "avg_spec_accept_length" not in info


@pytest.mark.parametrize(("era", "draft_tokens", "shown", "warned"), [
    ("0.5.0", 8, 4, True),  # topk 1: SGLang sets draft tokens to steps + 1 and says so
    ("0.5.0", 4, 4, False),  # already steps + 1: nothing to adjust
    ("0.4.5", 8, 8, False),  # before the rule existed
])
async def test_topk_1_draft_tokens_are_rewritten_as_sglang_does(tmp_path, started_groups, era, draft_tokens, shown,
                                                                warned):
    scenario = tmp_path / "plain.yaml"  # nothing scripted about the rewrite: the double computes it
    scenario.write_text(f'era: "{era}"\nphases_s: {{args: 0.01, weights: 0.01, kv_cache: 0.01, '
                        'cuda_graph_target: 0.01, cuda_graph_draft: 0.01, http: 0.01, warmup: 0.01}\n')
    env = harness.double_env(tmp_path, str(scenario))
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port).replace("--speculative-num-draft-tokens 8",
                                                   f"--speculative-num-draft-tokens {draft_tokens}")
    handle = await launch(host, command)
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY, status.describe()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10) as client:
        info = (await client.get("/get_server_info")).json()
    log = pathlib.Path(handle.log_path).read_text()
    assert f"speculative_num_draft_tokens={shown}," in log
    assert info["speculative_num_draft_tokens"] == shown and info["speculative_num_steps"] == 3
    adjusted = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
    assert log.count(adjusted) == (1 if warned else 0)


async def test_a_launch_without_speculation_logs_no_speculative_warning(tmp_path, started_groups):
    """A sweep's baseline (no --speculative-algorithm) on a scenario scripting the EAGLE warnings: SGLang prints them
    only inside its speculative block, so neither they nor the adjusted draft tokens appear."""
    env = harness.double_env(tmp_path, "fast")  # scripts the overlap warning (the draft-tokens one is computed)
    host = LocalHost(env=env)
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port, spec=False))
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, READY, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY, status.describe()
    log = pathlib.Path(handle.log_path).read_text()
    assert "server_args=ServerArgs(" in log
    assert "Overlap scheduler is disabled" not in log and "is adjusted to speculative_num_steps" not in log


@pytest.mark.parametrize("scenario", sorted(p.stem for p in harness.SCENARIOS_DIR.glob("*.yaml")))
@pytest.mark.parametrize(("steps", "shown", "warned"), [
    (3, 4, True),  # the command tools/try_local.sh prints: SGLang sets draft tokens 8 to steps + 1 and says so
    (7, 8, False),  # the builder's fix for it (steps 7 for 8 draft tokens): nothing to adjust, the server runs 8
])
async def test_every_scenario_applies_the_topk_1_rule_to_the_command_it_was_given(tmp_path, started_groups, scenario,
                                                                                  steps, shown, warned):
    """No scenario scripts the draft tokens or the "adjusted" warning any more (era_2026 did: after the builder's
    own fix the server still "ran 4, predicted 8"): the server_args line and the warning follow the command."""
    env = harness.double_env(tmp_path, scenario)
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port).replace("--speculative-num-steps 3", f"--speculative-num-steps {steps}")
    handle = await launch(host, command)
    started_groups.append(handle.pgid)
    log_path = pathlib.Path(handle.log_path)
    deadline = asyncio.get_running_loop().time() + guard(20)
    while "server_args=ServerArgs(" not in (log_path.read_text() if log_path.exists() else ""):
        assert asyncio.get_running_loop().time() < deadline, "no server_args line"
        await asyncio.sleep(0.05)
    log = log_path.read_text()
    assert f"speculative_num_steps={steps}, " in log and f"speculative_num_draft_tokens={shown}," in log
    adjusted = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
    assert log.count(adjusted) == (1 if warned else 0)
    harness.kill_group(handle.pgid)


@pytest.mark.parametrize("steps", [3, 7])
async def test_era_2026_accept_lengths_stay_within_the_running_configuration(tmp_path, started_groups, steps):
    """era_2026 scripts accept length 3.12: possible for steps 3 (at most 4) and steps 7 (at most 8); the decode
    lines, the request's meta_info and the server's average all stay at or below steps + 1."""
    env = harness.double_env(tmp_path, "era_2026")
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port).replace("--speculative-num-steps 3", f"--speculative-num-steps {steps}")
    handle, events, info, logged = await _ready_then_one_stream(host, command, started_groups, port, 40, "/server_info")
    assert logged and all(v <= steps + 1 for v in logged)
    assert info["speculative_num_draft_tokens"] == steps + 1
    assert events[-2]["meta_info"]["spec_accept_length"] <= steps + 1
    await stop(host, handle, grace_s=10)
