"""HTTP clients a test opens and closes at teardown (no leaked sockets)."""

from __future__ import annotations

import httpx2


class Clients:
    """Makes or adopts ``httpx2.AsyncClient``s; closes them all on ``aclose()``."""

    def __init__(self) -> None:
        self._open: list[httpx2.AsyncClient] = []

    def __call__(self, client: httpx2.AsyncClient | None = None) -> httpx2.AsyncClient:
        client = client if client is not None else httpx2.AsyncClient()
        self._open.append(client)
        return client

    async def aclose(self) -> None:
        for client in self._open:
            await client.aclose()
