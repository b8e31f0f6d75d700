"""A local SkyPilot-catalog stand-in on 127.0.0.1 whose files tests change between refreshes.

``server.base_url`` is what ``PriceSettings.base_url`` takes: files are served at
``{base_url}/v8/<cloud>/vms.csv`` from ``server.files`` (start from the fixtures with
``load(cloud)``); ``fail(cloud, 500)`` answers an error instead, ``hang(cloud)`` never
answers (until the server closes), and ``hits`` counts requests per cloud.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.fakes.loopback import LoopbackServer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skypilot"


class PriceServer(LoopbackServer):
    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.errors: dict[str, int] = {}
        self.hanging: set[str] = set()
        self.hits: Counter[str] = Counter()
        self._release = asyncio.Event()
        self._server: TestServer | None = None

    def load(self, *clouds: str) -> PriceServer:
        for cloud in clouds:
            self.files[cloud] = (FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8")
            self.errors.pop(cloud, None)
        return self

    def edit(self, cloud: str, old: str, new: str) -> None:
        """Replace ``old`` (which must be there) in a cloud's file."""
        assert old in self.files[cloud], f"{old!r} not in {cloud}"
        self.files[cloud] = self.files[cloud].replace(old, new)

    def fail(self, cloud: str, status: int = 500) -> None:
        self.errors[cloud] = status

    def hang(self, cloud: str) -> None:
        self.hanging.add(cloud)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return str(self._server.make_url("/catalogs"))

    async def _handle(self, request: web.Request) -> web.Response:
        cloud = request.match_info["cloud"]
        self.hits[cloud] += 1
        if cloud in self.hanging:
            await self._release.wait()
        if cloud in self.errors:
            return web.Response(status=self.errors[cloud], text="error")
        if cloud not in self.files:
            raise web.HTTPNotFound()
        return web.Response(text=self.files[cloud], content_type="text/csv")

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/catalogs/v8/{cloud}/vms.csv", self._handle)]
