"""What the network-facing clients (`tessera serve`, `tessera mcp --http`) share about addresses."""
from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): a server bound there is reachable from
    this machine only, so it may run without a password or token."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
