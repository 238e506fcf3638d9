"""Questions a node asks the user (``await ctx.ask(...)``) and the engine's answers to them.

An ``ask`` message goes to the engine, which forwards it to whoever can answer (the CLI cannot) and sends
back one ``answer``: the answers, or ``ask_unavailable``, which raises :class:`AskUnavailable` in the node.
A question waits on a ``concurrent.futures.Future``, since the answer arrives on the thread that reads the
channel while the node awaits it on the event loop.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Dict, List

from . import _protocol as proto

if TYPE_CHECKING:
    from ._runtime import Call


class MessageTooLarge(RuntimeError):
    """A message would be over the 16 MiB limit; the attempt fails with ``protocol_limit`` regardless."""


class AskUnavailable(RuntimeError):
    """The engine cannot ask the user (the CLI); uncaught, the attempt fails with ``ask_unavailable``."""


class Asks:
    """The questions of one runtime's calls: sends them, and hands each answer to the question waiting."""

    def __init__(
        self,
        calls: Dict[int, Call],
        send_bytes: Callable[[bytes], None],
        trip: Callable[[Call, str], None],
    ) -> None:
        self._calls = calls
        self._send_bytes = send_bytes
        self._trip = trip  # fails the attempt with protocol_limit, whatever the node does next
        self._ids = itertools.count(1)  # next() is atomic: questions may be asked from several threads

    async def ask(self, call: Call, questions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Asks ``questions`` (wire form) for ``call`` and returns the answers, or raises
        :class:`AskUnavailable` (nobody can answer) or :class:`MessageTooLarge`."""
        import asyncio
        import concurrent.futures

        if call.done:
            raise asyncio.CancelledError()
        ask_id = next(self._ids)
        data = proto.encode(proto.ask(call.id, ask_id, questions))
        if len(data) > proto.MAX_MESSAGE_BYTES:
            message = (
                f"the questions make a message of {len(data):,} bytes, over the limit of "
                f"{proto.MAX_MESSAGE_BYTES:,} bytes; ask about less text at once"
            )
            self._trip(call, message)
            raise MessageTooLarge(message)
        future: concurrent.futures.Future = concurrent.futures.Future()  # type: ignore[type-arg]
        if call.asks is None:
            call.asks = {}
        call.asks[ask_id] = future
        self._send_bytes(data)
        try:
            reply = await asyncio.wrap_future(future)
        finally:
            call.asks.pop(ask_id, None)  # type: ignore[union-attr]
        if reply.get("ok"):
            answers: List[Dict[str, Any]] = reply["answers"]
            return answers
        raise AskUnavailable(reply.get("message") or "asking the user is not available here")

    def answer(self, message: Dict[str, Any]) -> None:
        """An ``answer`` from the engine: wakes the question it answers (a late one is dropped)."""
        call = self._calls.get(message["id"])
        future = call.asks.get(message["ask_id"]) if call is not None and call.asks is not None else None
        if future is not None and not future.done():
            future.set_result(message)


def cancel_asks(call: Call) -> None:
    """A call that was answered: the questions it still waits on are cancelled."""
    if call.asks:
        for future in list(call.asks.values()):
            future.cancel()
