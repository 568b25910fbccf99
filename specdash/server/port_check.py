"""Is a launch command's HTTP port already taken on the host? Asked before a launch, so a server that would load
its weights, KV cache and CUDA graphs and only then fail to bind its port (SGLang starts its HTTP server last:
``sglang.srt.entrypoints.http_server.launch_server``) is not started at all.

The check binds the address on the host the way uvicorn's server does (CPython asyncio ``create_server``: one TCP
socket with ``SO_REUSEADDR`` for every address ``getaddrinfo`` gives the host name with ``AI_PASSIVE``, an IPv6 one
``IPV6_V6ONLY``), so a port in TIME_WAIT counts as free, one another process listens on (any address overlapping
it) as taken, and ``--host ::`` is not taken by an IPv4-only listener (nor ``0.0.0.0`` by an IPv6-only one). It
runs through the Host interface (one short ``python3 -c`` on the host).
"""

from __future__ import annotations

from specdash.hosts.base import Host, quote

#: SGLang's default ``--host`` (``ServerArgs.host``)
DEFAULT_BIND_HOST = "127.0.0.1"

_SCRIPT = (
    "import errno,socket,sys\n"
    "h,p=sys.argv[1] or None,int(sys.argv[2])\n"
    "k=[]\n"
    "try:\n"
    " for f,t,q,_,a in set(socket.getaddrinfo(h,p,type=socket.SOCK_STREAM,flags=socket.AI_PASSIVE)):\n"
    "  s=socket.socket(f,t,q);k.append(s);s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "  if f==socket.AF_INET6:s.setsockopt(socket.IPPROTO_IPV6,socket.IPV6_V6ONLY,1)\n"
    "  s.bind(a)\n"
    " print('free')\n"
    "except OSError as e:\n"
    " print('in-use' if e.errno==errno.EADDRINUSE else 'errno',e.errno)\n"
)


async def port_in_use(host: Host, port: int, bind_host: str | None = None, python: str = "python3") -> bool | None:
    """True when ``port`` on ``bind_host`` (None: SGLang's default 127.0.0.1; ``""``: every address) cannot be
    bound on ``host`` because another socket holds it (EADDRINUSE as the host's Python names it); False when it
    can; None when the check could not tell (``port`` not a TCP port 1-65535, no ``python``, the host unreachable,
    another error such as an address the host does not have). Never raises."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        return None
    host_arg = DEFAULT_BIND_HOST if bind_host is None else bind_host
    command = f"{quote(python)} -c {quote(_SCRIPT)} {quote(host_arg)} {port}"
    try:
        result = await host.run(command, timeout_s=15)
    except Exception:  # noqa: BLE001 - unknown is the honest answer when the host cannot be asked
        return None
    words = (getattr(result, "stdout", "") or "").split()
    if words == ["free"]:
        return False
    return True if len(words) == 2 and words[0] == "in-use" else None
