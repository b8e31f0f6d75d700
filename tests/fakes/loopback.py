"""The lifecycle every fake HTTP service shares: an aiohttp ``TestServer`` on 127.0.0.1.

A fake lists its routes in :meth:`LoopbackServer.routes` and keeps ``_server`` (None until
started) and ``_release`` (an event that frees requests the fake holds back, set on
close so a hanging handler never outlives the test).
"""

from __future__ import annotations

import asyncio
from typing import Self

from aiohttp import web
from aiohttp.test_utils import TestServer


class LoopbackServer:
    _server: TestServer | None
    _release: asyncio.Event

    def routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    async def start(self) -> Self:
        app = web.Application()
        app.add_routes(self.routes())
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        return self

    async def close(self) -> None:
        self._release.set()
        if self._server is not None:
            await self._server.close()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
