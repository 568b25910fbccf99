"""HTTP probes of an SGLang server: ``GET /health`` and ``/server_info`` (``/get_server_info`` before 2026).

Endpoints (SGLang ``python/sglang/srt/entrypoints/http_server.py``): ``/health`` answers 200 with an empty body when the
HTTP server is alive; ``/server_info`` (2026) and ``/get_server_info`` (all versions, deprecated in 2026) return the
post-rewrite
ServerArgs fields plus ``version``, ``max_total_num_tokens`` and ``internal_states``.

Two ways to reach the port: :func:`probe_http` with httpx from the machine running specdash (local servers, or
a forwarded port), and :func:`probe_via_host`, which runs ``curl`` on the host itself through ``Host.run`` —
the fallback for a remote host whose port is only reachable there. :func:`probe` picks one.

Every request is marked (:mod:`specdash.logs.own_traffic`) so the log pane can hide its access-log line, and an
endpoint that answered 404 is remembered in a :class:`ProbeMemory` and never asked again (``/server_info`` is 404
on releases before 2026).
"""

from __future__ import annotations

import dataclasses
import functools
import json

from specdash.hosts.base import Host
from specdash.logs.own_traffic import POLL_QUERY, marked

#: Endpoint names tried for server info, newest first.
SERVER_INFO_PATHS = ("/server_info", "/get_server_info")


@dataclasses.dataclass(frozen=True)
class HttpProbe:
    """One probe: ``health_status`` (HTTP status of /health; None when nothing answered), ``server_info``
    (decoded JSON object or None), ``server_info_path`` (which endpoint gave it), ``error`` (one line, when
    the server could not be reached)."""

    health_status: int | None
    server_info: dict | None = None
    server_info_path: str | None = None
    error: str | None = None

    @property
    def healthy(self) -> bool:
        """/health answered 200."""
        return self.health_status == 200


class ProbeMemory:
    """What the probes of one server learnt: ``missing`` (server-info endpoints that answered 404, never asked
    again). One per server (port): a restart may bring another SGLang release."""

    def __init__(self) -> None:
        self.missing: set[str] = set()

    def info_paths(self) -> tuple[str, ...]:
        """The server-info endpoints still worth asking, newest first (empty when both answered 404)."""
        return tuple(path for path in SERVER_INFO_PATHS if path not in self.missing)


async def probe_http(base_url: str, *, client=None, timeout_s: float = 2.0, info: bool = True,
                     memory: ProbeMemory | None = None) -> HttpProbe:
    """Probe ``base_url`` (e.g. ``http://127.0.0.1:30000``) with httpx from this machine: ``/health``, then (with
    ``info``) the server-info endpoints ``memory`` has not seen answer 404 (each 404 is added to it).

    ``client``: an ``httpx.AsyncClient`` to reuse (else one is made, ignoring proxy env vars). Never raises for
    network errors: they come back as ``HttpProbe(None, error=...)``.
    """
    import httpx

    memory = memory if memory is not None else ProbeMemory()
    own = client is None
    if own:
        client = httpx.AsyncClient(timeout=timeout_s, trust_env=False, verify=_ssl_context())
    base = base_url.rstrip("/")
    try:
        try:
            health = await client.get(base + marked("/health"), timeout=timeout_s)
        except httpx.HTTPError as exc:
            return HttpProbe(None, error=_one_line(exc) or type(exc).__name__)
        for path in memory.info_paths() if info else ():
            try:
                resp = await client.get(base + marked(path), timeout=timeout_s)
            except httpx.HTTPError:
                break
            if resp.status_code == 200:
                found = _json_object(resp.text)
                if found is not None:
                    return HttpProbe(health.status_code, found, path)
            if resp.status_code != 404:
                break
            memory.missing.add(path)
        return HttpProbe(health.status_code)
    finally:
        if own:
            await client.aclose()


async def probe_via_host(host: Host, port: int, *, timeout_s: float = 2.0, info: bool = True,
                         memory: ProbeMemory | None = None) -> HttpProbe:
    """Probe ``127.0.0.1:<port>`` from the host itself with ``curl -s`` (one ``Host.run``); ``info`` and
    ``memory`` as for :func:`probe_http` (the script reports each 404 as ``missing=PATH``).

    Returns ``HttpProbe(None, error=...)`` when nothing answers or curl is missing on the host.
    """
    memory = memory if memory is not None else ProbeMemory()
    paths = memory.info_paths() if info else ()
    t = f"{timeout_s:g}"
    url = f"http://127.0.0.1:{int(port)}"
    loop = (
        f"for p in {' '.join(paths)}; do "
        f"b=$(curl -s --max-time {t} -w '\\n%{{http_code}}' \"{url}$p?{POLL_QUERY}\"); "
        "c=$(printf '%s' \"$b\" | tail -n 1); "
        'if [ "$c" = 200 ]; then echo "path=$p"; printf "%s" "$b" | sed \'$d\'; exit 0; fi; '
        '[ "$c" = 404 ] || exit 0; echo "missing=$p"; done'
    ) if paths else "exit 0"
    script = (
        "command -v curl >/dev/null 2>&1 || { echo nocurl; exit 0; }; "
        f"h=$(curl -s -o /dev/null -w '%{{http_code}}' --max-time {t} \"{url}{marked('/health')}\"); "
        'echo "health=$h"; [ "$h" = 000 ] && exit 0; ' + loop
    )
    result = await host.run(script, timeout_s=timeout_s * 3 + 10)
    lines = result.stdout.split("\n")
    if lines and lines[0].strip() == "nocurl":
        return HttpProbe(None, error=f"curl not found on {host.name}")
    if not lines or not lines[0].startswith("health="):
        return HttpProbe(None, error=_one_line(result.stderr) or "probe failed")
    code = lines[0].split("=", 1)[1].strip()
    if not code.isdigit() or code == "000":
        return HttpProbe(None, error=f"nothing answers on port {port}")
    rest = lines[1:]
    while rest and rest[0].startswith("missing="):
        missing = rest.pop(0).split("=", 1)[1].strip()
        if missing in SERVER_INFO_PATHS:
            memory.missing.add(missing)
    if rest and rest[0].startswith("path="):
        found = _json_object("\n".join(rest[1:]))
        if found is not None:
            return HttpProbe(int(code), found, rest[0].split("=", 1)[1].strip())
    return HttpProbe(int(code))


async def probe(host: Host, port: int, *, client=None, timeout_s: float = 2.0, info: bool = True,
                memory: ProbeMemory | None = None) -> HttpProbe:
    """Probe the server on ``host``'s ``port``: httpx to 127.0.0.1 when the host is this machine, else curl on
    the host (:func:`probe_via_host`); ``info`` and ``memory`` as for :func:`probe_http`."""
    if host.is_local:
        return await probe_http(f"http://127.0.0.1:{int(port)}", client=client, timeout_s=timeout_s, info=info,
                                memory=memory)
    return await probe_via_host(host, port, timeout_s=timeout_s, info=info, memory=memory)


@functools.lru_cache(maxsize=1)
def _ssl_context():
    """One verifying SSL context for every probe (building one per client costs ~0.1-0.4 s)."""
    import ssl

    return ssl.create_default_context()


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _one_line(value) -> str:
    text = str(value).strip()
    return text.splitlines()[-1] if text else ""
