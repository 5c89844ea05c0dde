"""No network in tests that must run offline: connections to anything but this machine are refused.

`refuse_network(monkeypatch)` patches `socket.socket.connect` (and `connect_ex`), so a library that
tries to phone home (a hub download, telemetry, a tokenizer file) fails loudly inside the test instead
of quietly depending on the network. Import it as `from network_guard import refuse_network`.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

import pytest

attempts: list[str] = []
"""Every refused address, so a test can also assert that nothing tried."""


def _local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuse_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse every connection that leaves this machine; return the list the refused ones go to."""
    attempts.clear()
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _local(address):
            attempts.append(str(address))
            raise ConnectionRefusedError(f"the test refuses network access to {address}")
        return connect(self, address)

    def guarded_ex(self: socket.socket, address: Any) -> Any:
        if not _local(address):
            attempts.append(str(address))
            return 111
        return connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_ex)
    return attempts


def hub_offline(cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A test's Hugging Face hub: HF_HUB_CACHE at the `cache` folder it built, HF_HUB_OFFLINE=1 set here (goldeval
    never sets it for a user), and no network (`refuse_network`'s list of refused addresses)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return refuse_network(monkeypatch)
