"""``--http``: the SDK's streamable HTTP app behind a bearer token, served by uvicorn."""
from __future__ import annotations

import hmac
import socket

from mcp.server.transport_security import TransportSecuritySettings

WILDCARDS = ("0.0.0.0", "::")
UNAUTHORIZED = b'{"error": "unauthorized: send the header Authorization: Bearer <token of --token-file>"}'


class BearerToken:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="tessera"')]})
                await send({"type": "http.response.body", "body": UNAUTHORIZED})
                return
        await self.app(scope, receive, send)


def app(server, host: str, port: int, token: str | None):
    """The ASGI app: the MCP endpoint at /mcp. DNS-rebinding protection admits only the listening
    address as Host (and localhost on loopback); on a wildcard address (0.0.0.0, ::) the Host a
    client uses is not known, and the token is the guard."""
    named = f"[{host}]" if ":" in host else host
    hosts = [f"{named}:{port}", named]
    if host in ("127.0.0.1", "::1", "localhost"):
        hosts += [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    security = TransportSecuritySettings(enable_dns_rebinding_protection=host not in WILDCARDS,
                                         allowed_hosts=hosts, allowed_origins=[f"http://{h}" for h in hosts])
    inner = server.streamable_http_app(transport_security=security, host=host)
    return BearerToken(inner, token) if token else inner


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is served (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)   # asyncio sets TCP_NODELAY only then
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


async def serve(server, sock: socket.socket, token: str | None) -> None:
    import uvicorn
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app(server, host, port, token), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
