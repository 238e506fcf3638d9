"""``_loop.ThreadLoop``: the worker's loop for workflows without ``async def`` nodes keeps asyncio's rules."""

from __future__ import annotations

import os
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, List

from chrys.workflows._loop import ThreadLoop


class ThreadLoopTest(unittest.TestCase):
    def setUp(self) -> None:
        self.loop = ThreadLoop()
        self.seen: List[Any] = []
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def tearDown(self) -> None:
        if self.thread.is_alive():
            self.loop.stop()
            self.thread.join(5)
        self.assertFalse(self.thread.is_alive(), "run_forever did not return after stop()")

    def record(self, *values: Any) -> None:
        self.seen.append((values, threading.get_ident()))

    def wait_for(self, check: Callable[[], bool], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                self.fail(f"timed out; seen so far: {self.seen!r}")
            time.sleep(0.002)

    def test_callbacks_run_in_order_on_the_loop_thread(self) -> None:
        for i in range(5):
            self.loop.call_soon_threadsafe(self.record, i)
        self.thread.start()
        self.wait_for(lambda: len(self.seen) == 5)
        self.assertEqual([values for values, _ in self.seen], [(i,) for i in range(5)])
        self.assertEqual({ident for _, ident in self.seen}, {self.thread.ident})

    def test_a_callback_from_another_thread_wakes_a_waiting_loop(self) -> None:
        self.thread.start()
        time.sleep(0.05)  # the loop waits with nothing to do
        sender = threading.Thread(target=self.loop.call_soon_threadsafe, args=(self.record, "woken"))
        sender.start()
        sender.join()
        self.wait_for(lambda: len(self.seen) == 1)
        self.assertEqual(self.seen[0], (("woken",), self.thread.ident))

    def test_timers_fire_in_time_order_and_not_before_they_are_due(self) -> None:
        start = self.loop.time()
        fired: List[Any] = []
        for delay in (0.15, 0.05, 0.1):
            self.loop.call_at(start + delay, lambda d=delay: fired.append((d, self.loop.time() - start)))
        self.thread.start()
        self.wait_for(lambda: len(fired) == 3)
        self.assertEqual([delay for delay, _ in fired], [0.05, 0.1, 0.15])
        for delay, at in fired:
            self.assertGreaterEqual(at, delay)

    def test_call_later_counts_from_now(self) -> None:
        self.thread.start()
        start = time.monotonic()
        self.loop.call_later(0.05, self.record, "later")
        self.wait_for(lambda: len(self.seen) == 1)
        self.assertGreaterEqual(time.monotonic() - start, 0.05)

    def test_a_cancelled_timer_never_runs(self) -> None:
        handle = self.loop.call_later(0.02, self.record, "cancelled")
        self.loop.call_later(0.06, self.record, "kept")
        handle.cancel()
        self.thread.start()
        self.wait_for(lambda: len(self.seen) == 1)
        time.sleep(0.05)
        self.assertEqual([values for values, _ in self.seen], [("kept",)])

    def test_a_sooner_timer_set_from_another_thread_is_not_held_up_by_a_later_one(self) -> None:
        self.loop.call_later(30, self.record, "much later")
        self.thread.start()
        time.sleep(0.05)  # the loop now waits for the timer 30 s away
        start = time.monotonic()
        self.loop.call_later(0.02, self.record, "soon")
        self.wait_for(lambda: len(self.seen) == 1, timeout=5)
        self.assertEqual(self.seen[0][0], ("soon",))
        self.assertLess(time.monotonic() - start, 5)

    def test_a_callback_that_raises_is_reported_on_fd_2_and_the_loop_goes_on(self) -> None:
        def boom() -> None:
            raise RuntimeError("boom in a callback")

        with tempfile.TemporaryFile() as err:
            saved = os.dup(2)
            os.dup2(err.fileno(), 2)
            try:
                self.loop.call_soon_threadsafe(boom)
                self.loop.call_soon_threadsafe(self.record, "after")
                self.thread.start()
                self.wait_for(lambda: len(self.seen) == 1)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            err.seek(0)
            report = err.read().decode("utf-8")
        self.assertIn("chrys.workflows worker:", report)
        self.assertIn("RuntimeError: boom in a callback", report)
        self.assertEqual(self.seen[0][0], ("after",))

    def test_stop_returns_after_the_callbacks_already_waiting(self) -> None:
        self.loop.call_soon_threadsafe(self.record, 1)
        self.loop.stop()
        self.loop.call_soon_threadsafe(self.record, 2)
        self.loop.run_forever()  # on this thread: returns
        self.assertEqual([values for values, _ in self.seen], [(1,), (2,)])
        self.loop.close()
        self.assertTrue(self.loop.is_closed())


if __name__ == "__main__":
    unittest.main()
