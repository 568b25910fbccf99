"""HTTP probes of an SGLang server: ``GET /health`` and ``/server_info`` (``/get_server_info`` before 2026).

Endpoints (SGLang ``python/sglang/srt/entrypoints/http_server.py``): ``/health`` answers 200 with an empty body when the HTTP server is alive;
``/server_info`` (2026) and ``/get_server_info`` (all versions, deprecated in 2026) return the post-rewrite
ServerArgs fields plus ``version``, ``max_total_num_tokens`` and ``internal_states``.

Two ways to reach the port: :func:`probe_http` with httpx from the machine running specdash (local servers, or
a forwarded port), and :func:`probe_via_host`, which runs ``curl`` on the host itself through ``Host.run`` —
the fallback for a remote host whose port is only reachable there. :func:`probe` picks one.
"""

from __future__ import annotations

import dataclasses
import functools
import json

from specdash.hosts.base import Host

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


async def probe_http(base_url: str, *, client=None, timeout_s: float = 2.0) -> HttpProbe:
    """Probe ``base_url`` (e.g. ``http://127.0.0.1:30000``) with httpx from this machine.

    ``client``: an ``httpx.AsyncClient`` to reuse (else one is made, ignoring proxy env vars). Never raises for
    network errors: they come back as ``HttpProbe(None, error=...)``.
    """
    import httpx

    own = client is None
    if own:
        client = httpx.AsyncClient(timeout=timeout_s, trust_env=False, verify=_ssl_context())
    base = base_url.rstrip("/")
    try:
        try:
            health = await client.get(base + "/health", timeout=timeout_s)
        except httpx.HTTPError as exc:
            return HttpProbe(None, error=_one_line(exc) or type(exc).__name__)
        for path in SERVER_INFO_PATHS:
            try:
                resp = await client.get(base + path, timeout=timeout_s)
            except httpx.HTTPError:
                break
            if resp.status_code == 200:
                info = _json_object(resp.text)
                if info is not None:
                    return HttpProbe(health.status_code, info, path)
            if resp.status_code != 404:
                break
        return HttpProbe(health.status_code)
    finally:
        if own:
            await client.aclose()


async def probe_via_host(host: Host, port: int, *, timeout_s: float = 2.0) -> HttpProbe:
    """Probe ``127.0.0.1:<port>`` from the host itself with ``curl -s`` (one ``Host.run``).

    Returns ``HttpProbe(None, error=...)`` when nothing answers or curl is missing on the host.
    """
    t = f"{timeout_s:g}"
    url = f"http://127.0.0.1:{int(port)}"
    script = (
        "command -v curl >/dev/null 2>&1 || { echo nocurl; exit 0; }; "
        f"h=$(curl -s -o /dev/null -w '%{{http_code}}' --max-time {t} {url}/health); echo \"health=$h\"; "
        f'[ "$h" = 000 ] && exit 0; '
        f"for p in {' '.join(SERVER_INFO_PATHS)}; do "
        f"b=$(curl -s --max-time {t} -w '\\n%{{http_code}}' {url}$p); c=$(printf '%s' \"$b\" | tail -n 1); "
        'if [ "$c" = 200 ]; then echo "path=$p"; printf "%s" "$b" | sed \'$d\'; exit 0; fi; '
        '[ "$c" = 404 ] || exit 0; done'
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
    if len(lines) > 1 and lines[1].startswith("path="):
        info = _json_object("\n".join(lines[2:]))
        if info is not None:
            return HttpProbe(int(code), info, lines[1].split("=", 1)[1].strip())
    return HttpProbe(int(code))


async def probe(host: Host, port: int, *, client=None, timeout_s: float = 2.0) -> HttpProbe:
    """Probe the server on ``host``'s ``port``: httpx to 127.0.0.1 when the host is this machine, else curl on
    the host (:func:`probe_via_host`)."""
    if host.is_local:
        return await probe_http(f"http://127.0.0.1:{int(port)}", client=client, timeout_s=timeout_s)
    return await probe_via_host(host, port, timeout_s=timeout_s)


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
