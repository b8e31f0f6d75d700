"""One reply at a time in each thread, in this process and across replicas.

A reply in a thread is read, answered, posted and remembered in its turn, so a second
quick reply (``seq 8k``, then ``bs 4``) builds on the estimate the first one posted
instead of on the same earlier one and losing the first's change. Within one process an
:class:`asyncio.Lock` per thread orders the turns; replicas that share a store also take
the store's lock on the thread (:meth:`bot.store.Store.acquire_lock`, a Redis ``SET NX
PX`` script or a SQLite row), so two replies that reach two replicas in the same second
take turns too.

The shared lock never costs an answer: without a store, while it is unreachable, or when
the thread stays held past ``TURN_WAIT_S`` (a replica that died mid-turn holds it until
``TURN_LOCK_TTL_S``), the reply goes ahead on its own, as it did before there were turns.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from bot.store_types import StoreUnavailable, ThreadKey, count_unavailable

if TYPE_CHECKING:
    import asyncio

    from bot.store import Store

log = logging.getLogger(__name__)

TURN_LOCK_TTL_S = 30.0
"""Seconds the store holds a thread's turn: longer than any answer takes (an estimate is
milliseconds; a Hub fetch is bounded by its own timeout, 10 s by default), so a turn is
only ever cut short by a replica that stopped mid-turn."""
TURN_WAIT_S = 20.0
"""Seconds a reply waits for another replica's turn before it answers anyway."""
TURN_POLL_S = (0.02, 0.25)
"""First and longest pause between tries for a held thread, seconds (doubling)."""


class ThreadTurns:
    """Takes turns per :class:`ThreadKey` (see the module docstring)."""

    def __init__(
        self,
        store: Store | None,
        *,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        wait_s: float = TURN_WAIT_S,
    ) -> None:
        self.store = store
        self._sleep = sleep
        """How a held thread is waited on: ``asyncio.sleep`` when None. asyncio is imported
        only inside the turns, which run in an event loop: the Service that holds this is
        also the terminal's, which answers without one (``bot.clock``)."""
        self._wait_s = wait_s
        self._local: dict[ThreadKey, tuple[asyncio.Lock, list[int]]] = {}
        """Threads a reply is being answered in here, with their waiters."""

    def __len__(self) -> int:
        """Threads held or waited on in this process."""
        return len(self._local)

    @contextlib.asynccontextmanager
    async def turn(self, key: ThreadKey) -> AsyncIterator[None]:
        """Hold thread ``key`` while one reply in it is answered (module docstring)."""
        import asyncio

        entry = self._local.setdefault(key, (asyncio.Lock(), [0]))
        entry[1][0] += 1
        try:
            async with entry[0], self._shared(key):
                yield
        finally:
            entry[1][0] -= 1
            if not entry[1][0]:
                self._local.pop(key, None)

    @contextlib.asynccontextmanager
    async def _shared(self, key: ThreadKey) -> AsyncIterator[None]:
        """The store's lock on ``key`` for replicas, when there is a store to ask."""
        if self.store is None:
            yield
            return
        name = f"turn:{key.platform}:{key.channel}:{key.thread}"
        owner = uuid.uuid4().hex
        try:
            held = await self._acquire(name, owner)
        except BaseException:
            # Cancelled (a failed defer) while the store may already hold the lock for this
            # owner: release it, or the thread's next reply waits out the lock's TTL. The
            # release is best effort: whatever it raises, the cancellation is what goes on.
            with contextlib.suppress(Exception):
                await self._release(name, owner)
            raise
        try:
            yield
        finally:
            if held:
                await self._release(name, owner)

    async def _release(self, name: str, owner: str) -> None:
        """Give ``name`` back if ``owner`` holds it (best effort: the store may be down)."""
        assert self.store is not None
        with contextlib.suppress(StoreUnavailable):
            await self.store.release_lock(name, owner)

    async def _acquire(self, name: str, owner: str) -> bool:
        """Take ``name`` for ``owner``, waiting up to ``wait_s`` for another holder; False
        when the reply goes ahead without it (store down, or still held)."""
        assert self.store is not None
        pause, waited = TURN_POLL_S[0], 0.0
        while True:
            try:
                if await self.store.acquire_lock(name, owner, TURN_LOCK_TTL_S):
                    return True
            except StoreUnavailable:
                count_unavailable("thread_turn")
                return False
            if waited >= self._wait_s:
                log.warning("thread %s still held after %.0f s: answering anyway", name, waited)
                return False
            if self._sleep is None:
                import asyncio

                await asyncio.sleep(pause)
            else:
                await self._sleep(pause)
            waited += pause
            pause = min(pause * 2, TURN_POLL_S[1])
