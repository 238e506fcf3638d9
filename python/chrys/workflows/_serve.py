"""The worker's protocol loop: ``hello``, then one ``load``, then concurrent calls until ``shutdown``.

Loading runs on the main thread with no event loop running, so top-level code may call ``asyncio.run()``
and register signal handlers as in a script; the engine enforces the load time limit by killing the process.
After a successful load the main thread runs the event loop (time limits, the pool's monitor, and ``async def``
nodes) and the channel is read by a pool thread, which runs the sync calls it reads itself (see
``_pool.Pool``). The loop is asyncio's only when the workflow has an ``async def`` node or its code imported
asyncio while it loaded; otherwise it is a ``_loop.ThreadLoop``, and the run never imports asyncio (~35 ms).

Start-up is on the path of every ``icode workflow validate`` and run, so nothing of the call machinery is
imported before the load is answered: the runtime costs milliseconds of imports, more than a small load.
It is imported on a thread while the engine reads the load result (and waited for at the first call), or,
when the engine said it will only load (``--load-only``), at the first call: a validation sends ``shutdown``
next, and a thread busy importing would hold up the exit (it holds the interpreter lock).
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from . import _protocol as proto
from . import _tracebacks as tb
from ._capture import Capture, RoutedStream, current, fallback

if TYPE_CHECKING:
    import asyncio
    from importlib.machinery import ModuleSpec

    from ._loader import Loaded


HOLD_BYTES = 64 * 1024
"""Answers held back for one write (see :meth:`Channel.hold`) go out once they reach this size."""
SMALL_READ = 64 * 1024
"""Bytes read from the channel at once, or ``LARGE_READ`` while a message of more than that comes in."""
LARGE_READ = 1024 * 1024


class Channel:
    """The worker → engine pipe. Any thread may send; a message is written whole, under a lock."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self.forked = False
        self.writing = False
        """Whether a write is under way: the pool's monitor starts no threads while the engine is not reading."""
        self._held: List[bytes] = []
        self._held_bytes = 0
        if hasattr(os, "register_at_fork"):
            # A process forked by user code (without exec) must never speak on the engine's channel.
            os.register_at_fork(after_in_child=self._mute)

    def _mute(self) -> None:
        self.forked = True

    def send_bytes(self, data: bytes) -> None:
        if self.forked:
            return
        with self._lock:
            if self._held:
                data = self._take_held(data)
            self._write(data)

    def hold(self, data: bytes) -> None:
        """Queues a message to go out with the next write or :meth:`flush` (at most 64 KiB are held)."""
        if self.forked:
            return
        with self._lock:
            self._held.append(data)
            self._held_bytes += len(data)
            if self._held_bytes >= HOLD_BYTES:
                self._write(self._take_held())

    def flush(self) -> None:
        """Sends the messages held back, if any."""
        if self._held and not self.forked:
            with self._lock:
                if self._held:
                    self._write(self._take_held())

    def _take_held(self, data: bytes = b"") -> bytes:
        self._held.append(data)
        joined = b"".join(self._held)
        self._held = []
        self._held_bytes = 0
        return joined

    def _write(self, data: bytes) -> None:
        self.writing = True
        try:
            written = os.write(self._fd, data)
            if written < len(data):  # a full pipe: the rest as the engine reads
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(self._fd, view) :]
        except OSError:
            os._exit(0)  # the engine is gone: nobody is left to answer
        finally:
            self.writing = False

    def send(self, message: Dict[str, Any]) -> bool:
        """Sends ``message`` unless it is over the size limit (then returns ``False``)."""
        data = proto.encode(message)
        if len(data) > proto.MAX_MESSAGE_BYTES:
            return False
        self.send_bytes(data)
        return True


def _libc() -> str:
    """``platform.libc_ver()`` joined, as it answers on glibc from ``os.confstr`` (importing ``platform`` costs
    ~2 ms of every worker start); elsewhere it is asked."""
    try:
        parts = os.confstr("CS_GNU_LIBC_VERSION").split(maxsplit=1)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        parts = []
    if len(parts) == 2:
        return " ".join(parts)
    import platform

    return " ".join(part for part in platform.libc_ver() if part)


def _machine() -> str:
    """``platform.machine()``: ``os.uname()``'s on POSIX."""
    machine = os.uname().machine if hasattr(os, "uname") else ""
    if machine:
        return machine
    import platform

    return platform.machine()


def python_info() -> Dict[str, Any]:
    libc = _libc()
    info = sys.version_info
    return {
        "executable": os.path.realpath(sys.executable) if sys.executable else "",
        "version": f"{info.major}.{info.minor}.{info.micro}",
        "version_info": [info.major, info.minor, info.micro],
        "implementation": sys.implementation.name,
        "platform": sys.platform,
        "machine": _machine(),
        "libc": libc,
    }


def _same_path(left: Optional[str], right: Optional[str]) -> bool:
    if not left or not right:
        return False
    return os.path.normcase(os.path.abspath(left)) == os.path.normcase(os.path.abspath(right))


def _import_call_machinery() -> None:
    """What serving calls needs (the runtime and its loop); run on a thread after the load is answered."""
    try:
        from . import _loop, _runtime  # noqa: F401
    except BaseException:  # imported again where it is used, and the error raised there
        pass


def _is_shutdown(line: bytes) -> bool:
    """Whether a message is ``shutdown``, read without ``decode_request``: the message is decoded again when
    it is served, and decoding takes the ``keep: false`` strings it names (see ``_protocol.StringTable``)."""
    if len(line) > 256:
        return False
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return type(message) is dict and message.get("type") == "shutdown"


class _LoopOnImport:
    """Gives a workflow's top-level code a current event loop without importing asyncio for every load.

    The worker serves calls on an event loop that used to be set before the load, so top-level code could use
    ``asyncio.get_event_loop()`` (an error without one from Python 3.14). Importing asyncio costs ~25 ms of
    every start, and most workflows never import it. Put first on ``sys.meta_path`` during the load, this sets
    the loop the moment the workflow's code first imports asyncio (in the main thread), and the worker then
    serves calls on it, as before.
    """

    def __init__(self) -> None:
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    def install(self) -> None:
        if "asyncio" in sys.modules:
            self.set_loop(sys.modules["asyncio"])
        else:
            sys.meta_path.insert(0, self)

    def uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def set_loop(self, asyncio_module: Any) -> None:
        if self.loop is None and threading.current_thread() is threading.main_thread():
            self.loop = asyncio_module.new_event_loop()
            asyncio_module.set_event_loop(self.loop)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Optional[ModuleSpec]:
        if name != "asyncio":
            return None
        self.uninstall()
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec is not None else None
            if spec is not None:
                if hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenSetLoop(spec.loader, self)
                return spec
        return None


class _ThenSetLoop:
    """The loader of asyncio, which has :class:`_LoopOnImport` set the loop once the module ran."""

    def __init__(self, loader: Any, hook: _LoopOnImport) -> None:
        self.loader = loader
        self.hook = hook

    def create_module(self, spec: ModuleSpec) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = module.__spec__.loader = self.loader  # the module keeps its own loader
        self.loader.exec_module(module)
        self.hook.set_loop(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class Worker:
    def __init__(self, fd_in: int, fd_out: int, sdk_root: str, prepare_calls: bool = True) -> None:
        self.fd_in = fd_in
        self.prepare_calls = prepare_calls
        """Whether to import the call machinery while the engine reads the load result, or at the first call."""
        self.channel = Channel(fd_out)
        self.sdk_root = sdk_root
        self.reader = proto.LineReader()
        self.stdout = RoutedStream(1, "<stdout>")
        self.stderr = RoutedStream(2, "<stderr>")
        self.runtime: Any = None
        self._load_attempted = False
        self._backlog: List[Tuple[Optional[bytes], bytes]] = []
        self._loop_hook = _LoopOnImport()
        self._loaded: Optional[Tuple[Loaded, str]] = None
        """The workflow that loaded, and its folder."""

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
        self._after_load(pending)

    def _after_load(self, pending: List[Tuple[Optional[bytes], bytes]]) -> None:
        """Sets up the runtime and serves calls, unless the engine's next message is ``shutdown``."""
        importing: Optional[threading.Thread] = None
        if self.prepare_calls:
            importing = threading.Thread(target=_import_call_machinery, name="chrys-import", daemon=True)
            importing.start()
        # The first message after the load: `shutdown` (the engine only validated) ends the worker without
        # waiting for the imports; anything else is served once they are done.
        if not pending:
            pending = self._read()
        if pending[0][0] is not None and _is_shutdown(pending[0][0]):
            os._exit(0)
        if importing is not None:
            importing.join()
        from ._runtime import Runtime

        assert self._loaded is not None
        loaded_workflow, workflow_dir = self._loaded
        user = tb.UserFiles(self.sdk_root, workflow_dir)
        definition = loaded_workflow.definition
        self.runtime = Runtime(self.channel, definition, loaded_workflow.callables, user)
        self.serve_calls(self._call_loop(definition), pending)

    def _call_loop(self, definition: Dict[str, Any]) -> Any:
        """The loop calls are served on: the asyncio loop the workflow's code got while it loaded, a new one
        for ``async def`` nodes, or else a ``ThreadLoop``, which spares the run importing asyncio."""
        loop = self._loop_hook.loop
        if loop is not None and not loop.is_closed():
            return loop
        if any(node.get("is_async") for node in definition.get("nodes", ())):
            import asyncio

            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            return loop
        from ._loop import ThreadLoop

        return ThreadLoop()

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
            self._loop_hook.install()
            try:
                loaded, diagnostics, truncated = load_workflow(message["entry"], message["package_dir"], self.sdk_root)
            except BaseException as error:  # our own failure: report it, keep the worker answering
                import traceback  # only failures need it (see _tracebacks)

                diagnostics = [
                    diagnostic(
                        "internal_error",
                        f"loading failed inside iCode: {tb.describe(error)}",
                        file=message["entry"],
                        traceback="".join(traceback.format_exception(type(error), error, error.__traceback__)),
                    )
                ]
            finally:
                self._loop_hook.uninstall()
                fallback.capture = None
                current.reset(token)
                capture.close()
                self._route_streams()  # top-level code may have replaced them
        captured = capture.result()
        if loaded is not None:
            data = proto.loaded_bytes(call_id, loaded.definition, captured)
            if len(data) <= proto.MAX_MESSAGE_BYTES:
                self._loaded = (loaded, message["package_dir"] or os.path.dirname(os.path.abspath(message["entry"])))
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

    # -- phase 2: calls (read by a pool thread; async ones, timers and the monitor on the event loop) ----------

    def serve_calls(self, loop: Any, backlog: List[Tuple[Optional[bytes], bytes]]) -> None:
        """Serves calls until ``shutdown``; ``backlog`` holds the messages that arrived right behind the load."""
        self._backlog = backlog
        self.runtime.loop = loop
        self.runtime.serve(self._read_messages)
        loop.run_forever()

    def _read_messages(self) -> None:
        """On the pool thread that reads: blocks for the next chunk and dispatches its messages in order."""
        if self.channel.forked:
            os._exit(0)  # a forked copy: the messages are not its to read
        lines = self._backlog
        if lines:
            self._backlog = []
        else:
            # 64 KiB (a pipe's buffer) per read: a 1 MiB buffer costs an mmap, mremap and munmap per read.
            # A large message on its way is read in larger pieces.
            try:
                chunk = os.read(self.fd_in, LARGE_READ if self.reader.buffered >= SMALL_READ else SMALL_READ)
            except InterruptedError:
                return
            except OSError:
                os._exit(0)
            if not chunk:
                os._exit(0)  # the engine closed the channel
            lines = self.reader.feed(chunk)
        for line, prefix in lines:
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


def serve(fd_in: int, fd_out: int, sdk_root: str, prepare_calls: bool = True) -> None:
    """Serves the engine; ``prepare_calls=False`` when it will only load (see the module's docstring)."""
    Worker(fd_in, fd_out, sdk_root, prepare_calls).serve()
    os._exit(0)
