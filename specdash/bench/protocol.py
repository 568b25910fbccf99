"""Wire formats of the three streaming APIs, as pure functions: request bodies, SSE splitting, event reading.

* OpenAI-compatible ``POST /v1/chat/completions`` and ``POST /v1/completions`` with ``"stream": true``: events
  ``data: {json}`` separated by a blank line, ending with ``data: [DONE]``. specdash asks for
  ``stream_options = {"include_usage": true, "continuous_usage_stats": true}`` so that every chunk carries the
  cumulative ``usage.completion_tokens`` (SGLang and vLLM honour both; a server that ignores the second still sends
  usage in the last chunk).
* SGLang native ``POST /generate`` with ``"stream": true``: each event holds the cumulative ``text`` and a
  ``meta_info`` with cumulative ``completion_tokens`` and, with speculation, ``spec_verify_ct`` (SGLang
  ``tokenizer_manager.py``).
"""

from __future__ import annotations

import dataclasses
import json

ENDPOINTS = {"chat": "/v1/chat/completions", "completions": "/v1/completions", "generate": "/generate"}


def request_body(
    api: str,
    prompt: str,
    *,
    model: str,
    max_tokens: int,
    temperature: float,
    ignore_eos: bool,
    seed: int | None = None,
) -> dict:
    """The JSON body of one streaming request for ``api`` ("chat", "completions" or "generate").

    ``max_tokens``: output length limit in tokens; ``ignore_eos``: generate exactly ``max_tokens`` (SGLang accepts
    it as an extra field on the OpenAI APIs and as a sampling parameter on /generate). Raises ``ValueError``
    for an unknown api.
    """
    if api == "generate":
        params: dict = {"max_new_tokens": max_tokens, "temperature": temperature, "ignore_eos": ignore_eos}
        return {"text": prompt, "sampling_params": params, "stream": True}
    common: dict = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        "ignore_eos": ignore_eos,
    }
    if seed is not None:
        common["seed"] = seed
    if api == "chat":
        return {"messages": [{"role": "user", "content": prompt}], **common}
    if api == "completions":
        return {"prompt": prompt, **common}
    raise ValueError(f"unknown api {api!r}; expected one of {', '.join(ENDPOINTS)}")


class SSESplitter:
    """Incremental splitter of a server-sent-event byte stream into ``data:`` payload strings.

    Feed raw bytes as they arrive; get back the complete ``data:`` payloads (without the prefix) in order. Lines
    other than ``data:`` (comments, ``event:``, blank separators) are dropped; ``\\r\\n`` is accepted.
    """

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[str]:
        """Add ``data``; return the payloads of all lines completed by it."""
        if b"\n" not in data:
            self._buffer += data
            return []
        lines = (self._buffer + data if self._buffer else data).split(b"\n")
        self._buffer = lines.pop()
        return [line[5:].strip().decode("utf-8", errors="replace") for line in lines if line.startswith(b"data:")]

    def flush(self) -> list[str]:
        """Payload of a final line without a newline, if any."""
        rest, self._buffer = self._buffer.rstrip(b"\r"), b""
        if rest.startswith(b"data:"):
            return [rest[5:].strip().decode("utf-8", errors="replace")]
        return []


@dataclasses.dataclass(frozen=True)
class StreamEvent:
    """What one streamed event says.

    ``done``: the ``[DONE]`` sentinel; ``has_text``: the event carries generated text (so at least one token);
    ``completion_tokens``: cumulative output tokens reported by the server (usage or meta_info), else ``None``;
    ``spec_verify_ct``: cumulative verify steps (/generate with speculation), else ``None``;
    ``prompt_tokens``; ``finish_reason``; ``error``: an error message the server put in the stream.
    """

    done: bool = False
    has_text: bool = False
    completion_tokens: int | None = None
    spec_verify_ct: int | None = None
    prompt_tokens: int | None = None
    finish_reason: str | None = None
    error: str | None = None


DONE = StreamEvent(done=True)


def _finish(value: object) -> str | None:
    if isinstance(value, dict):
        value = value.get("type")
    return value if isinstance(value, str) else None


def parse_event(api: str, payload: str) -> StreamEvent:
    """Interpret one ``data:`` payload of ``api``'s stream. Malformed JSON gives an event with ``error`` set; a field
    of the wrong type (a count that is not a non-negative integer, ``choices`` that is not a list) reads as absent."""
    if payload == "[DONE]":
        return DONE
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):  # not JSON, an over-long integer, or nesting deeper than Python's stack
        return StreamEvent(error=f"malformed stream event: {payload[:80]!r}")
    if not isinstance(data, dict):
        return StreamEvent(error=f"unexpected stream event: {payload[:80]!r}")
    if "error" in data and data["error"]:
        err = data["error"]
        return StreamEvent(error=str(err.get("message", err) if isinstance(err, dict) else err))
    if api == "generate":
        meta = _dict(data.get("meta_info"))
        return StreamEvent(
            has_text=bool(data.get("text")),
            completion_tokens=_count(meta.get("completion_tokens")),
            spec_verify_ct=_count(meta.get("spec_verify_ct")),
            prompt_tokens=_count(meta.get("prompt_tokens")),
            finish_reason=_finish(meta.get("finish_reason")),
        )
    usage = _dict(data.get("usage"))
    choices = data.get("choices")
    text: object = ""
    finish = None
    if isinstance(choices, list) and choices:
        choice = _dict(choices[0])
        if api == "chat":
            text = _dict(choice.get("delta")).get("content") or ""
        else:
            text = choice.get("text") or ""
        finish = _finish(choice.get("finish_reason"))
    return StreamEvent(
        has_text=bool(text),
        completion_tokens=_count(usage.get("completion_tokens")),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        finish_reason=finish,
    )


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int | None:
    """A token or step count as the server sent it: a non-negative int, else None (a malformed field is unknown)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
