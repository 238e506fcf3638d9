"""The worker's protocol loop: ``hello``, then one ``load``, then concurrent calls until ``shutdown``.

Loading runs on the main thread with no event loop running, so top-level code may call ``asyncio.run()``
and register signal handlers as in a script; the engine enforces the load time limit by killing the process.
After a successful load the worker serves calls on an asyncio event loop that reads the channel directly.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import platform
import signal
import sys
import threading
import traceback
from typing import Any, Dict, List, Optional, Tuple

from . import _protocol as proto
from . import _tracebacks as tb
from ._capture import Capture, RoutedStream, current, fallback


class Channel:
    """The worker → engine pipe. Any thread may send; a message is written whole, under a lock."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self.forked = False
        if hasattr(os, "register_at_fork"):
            # A process forked by user code (without exec) must never speak on the engine's channel.
            os.register_at_fork(after_in_child=self._mute)

    def _mute(self) -> None:
        self.forked = True

    def send_bytes(self, data: bytes) -> None:
        if self.forked:
            return
        view = memoryview(data)
        with self._lock:
            try:
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
            except OSError:
                os._exit(0)  # the engine is gone: nobody is left to answer

    def send(self, message: Dict[str, Any]) -> bool:
        """Sends ``message`` unless it is over the size limit (then returns ``False``)."""
        data = proto.encode(message)
        if len(data) > proto.MAX_MESSAGE_BYTES:
            return False
        self.send_bytes(data)
        return True


def python_info() -> Dict[str, Any]:
    libc = " ".join(part for part in platform.libc_ver() if part)
    info = sys.version_info
    return {
        "executable": os.path.realpath(sys.executable) if sys.executable else "",
        "version": f"{info.major}.{info.minor}.{info.micro}",
        "version_info": [info.major, info.minor, info.micro],
        "implementation": sys.implementation.name,
        "platform": sys.platform,
        "machine": platform.machine(),
        "libc": libc,
    }


def _same_path(left: Optional[str], right: Optional[str]) -> bool:
    if not left or not right:
        return False
    return os.path.normcase(os.path.abspath(left)) == os.path.normcase(os.path.abspath(right))


class Worker:
    def __init__(self, fd_in: int, fd_out: int, sdk_root: str) -> None:
        self.fd_in = fd_in
        self.channel = Channel(fd_out)
        self.sdk_root = sdk_root
        self.reader = proto.LineReader()
        self.stdout = RoutedStream(1, "<stdout>")
        self.stderr = RoutedStream(2, "<stderr>")
        self.runtime: Any = None
        self._load_attempted = False

    # -- phase 1: hello and load (blocking reads, main thread) ------------------------------------------------

    def _route_streams(self) -> None:
        sys.stdout = self.stdout  # type: ignore[assignment]
        sys.stderr = self.stderr  # type: ignore[assignment]

    def _read(self) -> List[Tuple[Optional[bytes], bytes]]:
        """Blocks until at least one line (or oversized line) arrives; exits when the engine is gone."""
        while True:
            try:
                chunk = os.read(self.fd_in, 1 << 20)
            except InterruptedError:
                continue
            except OSError:
                os._exit(0)
            if not chunk:
                os._exit(0)  # the engine closed the channel
            lines = self.reader.feed(chunk)
            if lines:
                return lines

    def _refuse(self, call_id: Optional[int], message: str, kind: Optional[str] = None) -> None:
        if call_id is not None and kind == "invoke":
            error = proto.call_error("protocol_error", message, phase="node")
            self.channel.send(proto.failed_result(call_id, error, {"text": "", "truncated": False}, 0))
        else:
            self.channel.send(proto.protocol_error(call_id, message))

    def serve(self) -> None:
        import chrys.workflows as sdk

        self._route_streams()
        try:
            signal.signal(signal.SIGINT, lambda *_: None)  # the engine ends the worker; Ctrl-C is the engine's
        except (ValueError, OSError):
            pass
        if hasattr(signal, "SIGUSR1"):
            # Before killing a load that ran out of time, the engine asks where every thread is (on fd 2).
            faulthandler.register(signal.SIGUSR1, file=2, all_threads=True)
        self.channel.send(
            proto.hello(str(getattr(sdk, "__version__", "0")), python_info(), os.getpid(), sys.pycache_prefix)
        )
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        pending: List[Tuple[Optional[bytes], bytes]] = []
        loaded = False
        while not loaded:
            if not pending:
                pending = self._read()
            line, prefix = pending.pop(0)
            if line is None:
                self._refuse(proto.call_id_of(prefix), "message over the 16 MiB limit", "invoke")
                continue
            try:
                message = proto.decode_request(line)
            except proto.ProtocolError as error:
                self._refuse(error.call_id, str(error), "invoke")
                continue
            kind = message["type"]
            if kind == "load":
                loaded = self.load(message)
                if self.channel.forked:
                    os._exit(0)  # top-level code forked and the copy came back here: it has nothing to serve
            elif kind == "shutdown":
                os._exit(0)
            elif kind == "invoke":
                self._refuse(message["id"], "no workflow is loaded: send a successful load first", "invoke")
        if loop.is_closed():
            loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for line, prefix in pending:  # sent right behind the load
            loop.call_soon(self._dispatch, line, prefix)
        self.serve_calls(loop)

    def load(self, message: Dict[str, Any]) -> bool:
        """Loads the workflow and answers; ``True`` when it loaded (the worker then serves calls)."""
        from ._loader import diagnostic, load_workflow

        call_id = message["id"]
        if self._load_attempted:
            self.channel.send(proto.protocol_error(call_id, "a worker loads one workflow; start a new worker"))
            return False
        self._load_attempted = True
        capture = Capture(on_text=lambda text: self.channel.send(proto.load_output(call_id, text)))
        diagnostics: List[Dict[str, Any]] = []
        truncated = False
        loaded = None
        expected = os.environ.get("PYTHONPYCACHEPREFIX")
        if not _same_path(expected, sys.pycache_prefix):
            diagnostics.append(
                diagnostic(
                    "worker_failed",
                    f"the Python interpreter does not use the bytecode cache folder iCode set "
                    f"(PYTHONPYCACHEPREFIX={expected!r}, sys.pycache_prefix={sys.pycache_prefix!r}), so it would "
                    "write __pycache__ folders beside the workflow's files",
                    hint="Do not start Python with -E or -I (for example in a wrapper script); point the workflow "
                    "at the interpreter itself.",
                )
            )
        else:
            token = current.set(capture)
            fallback.capture = capture
            try:
                loaded, diagnostics, truncated = load_workflow(message["entry"], message["package_dir"], self.sdk_root)
            except BaseException as error:  # our own failure: report it, keep the worker answering
                diagnostics = [
                    diagnostic(
                        "internal_error",
                        f"loading failed inside iCode: {tb.describe(error)}",
                        file=message["entry"],
                        traceback="".join(traceback.format_exception(type(error), error, error.__traceback__)),
                    )
                ]
            finally:
                fallback.capture = None
                current.reset(token)
                capture.close()
                self._route_streams()  # top-level code may have replaced them
        captured = capture.result()
        if loaded is not None:
            data = proto.encode(proto.loaded(call_id, loaded.definition, captured))
            if len(data) <= proto.MAX_MESSAGE_BYTES:
                from ._runtime import Runtime

                user = tb.UserFiles(self.sdk_root, message["package_dir"] or os.path.dirname(os.path.abspath(message["entry"])))
                self.runtime = Runtime(self.channel, loaded.definition, loaded.callables, user)
                self.channel.send_bytes(data)
                return True
            diagnostics = [
                diagnostic(
                    "internal_error",
                    f"the built workflow definition makes a message of {len(data):,} bytes, over the limit of "
                    f"{proto.MAX_MESSAGE_BYTES:,} bytes",
                    file=os.path.abspath(message["entry"]),
                    hint="Split the workflow into smaller ones.",
                )
            ]
        self.channel.send(proto.load_failed(call_id, diagnostics, truncated, captured))
        return False

    # -- phase 2: calls on the event loop ---------------------------------------------------------------------

    def serve_calls(self, loop: asyncio.AbstractEventLoop) -> None:
        runtime = self.runtime
        runtime.loop = loop
        os.set_blocking(self.fd_in, False)
        loop.add_reader(self.fd_in, self._readable)
        loop.run_forever()

    def _readable(self) -> None:
        if self.channel.forked:
            os._exit(0)  # a forked copy woken by the shared event loop: the messages are not its to read
        try:
            chunk = os.read(self.fd_in, 1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            os._exit(0)
        if not chunk:
            os._exit(0)
        for line, prefix in self.reader.feed(chunk):
            self._dispatch(line, prefix)

    def _dispatch(self, line: Optional[bytes], prefix: bytes) -> None:
        runtime = self.runtime
        if line is None:
            call_id = proto.call_id_of(prefix)
            if call_id is not None and call_id in runtime.calls:
                self._refuse(call_id, "message over the 16 MiB limit")
            else:
                self._refuse(call_id, "message over the 16 MiB limit", "invoke")
            return
        try:
            message = proto.decode_request(line)
        except proto.ProtocolError as error:
            running = error.call_id is not None and error.call_id in runtime.calls
            self._refuse(error.call_id, str(error), None if running else "invoke")
            return
        kind = message["type"]
        if kind == "invoke":
            runtime.invoke(message)
        elif kind == "answer":
            runtime.answer(message)
        elif kind == "cancel":
            runtime.cancel(message["id"])
        elif kind == "shutdown":
            os._exit(0)
        else:
            self.channel.send(proto.protocol_error(message.get("id"), "a worker loads one workflow; start a new worker"))


def serve(fd_in: int, fd_out: int, sdk_root: str) -> None:
    Worker(fd_in, fd_out, sdk_root).serve()
    os._exit(0)
