"""Captured ``print()`` output: the 64 KiB UTF-8 cut, dropping after close, and routing by context so that
concurrent calls (threads and asyncio tasks) each keep their own output."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import unittest

from chrys.workflows._capture import Capture, RoutedStream, current, fallback


class CaptureTest(unittest.TestCase):
    def test_keeps_the_first_bytes_and_flags_truncation(self) -> None:
        capture = Capture(limit=10)
        capture.write("abc")
        capture.write("defgh")
        self.assertEqual(capture.result(), {"text": "abcdefgh", "truncated": False})
        capture.write("ijk")
        self.assertEqual(capture.result(), {"text": "abcdefghij", "truncated": True})
        capture.write("more")
        self.assertEqual(capture.text, "abcdefghij")

    def test_cuts_on_a_character_boundary(self) -> None:
        capture = Capture(limit=6)
        capture.write("ab")
        capture.write("éé€")  # 2 + 2 + 3 bytes: only the two é fit
        self.assertEqual(capture.result(), {"text": "abéé", "truncated": True})
        capture = Capture(limit=3)
        capture.write("ab€")
        self.assertEqual(capture.result(), {"text": "ab", "truncated": True})

    def test_exactly_the_limit_is_not_truncated(self) -> None:
        capture = Capture(limit=4)
        capture.write("abcd")
        self.assertEqual(capture.result(), {"text": "abcd", "truncated": False})

    def test_unpaired_surrogates_become_valid_text(self) -> None:
        capture = Capture()
        capture.write("bad \ud800 char")
        self.assertEqual(capture.text, "bad ? char")

    def test_writes_after_close_are_dropped(self) -> None:
        capture = Capture()
        capture.write("kept")
        capture.close()
        capture.write("dropped")
        self.assertEqual(capture.text, "kept")

    def test_on_text_sees_what_is_kept(self) -> None:
        seen = []
        capture = Capture(limit=5, on_text=seen.append)
        capture.write("abc")
        capture.write("defg")
        capture.write("h")
        self.assertEqual(seen, ["abc", "de"])


class RoutedStreamTest(unittest.TestCase):
    def setUp(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.stream = RoutedStream(self.write_fd, "<stdout>")

    def tearDown(self) -> None:
        os.close(self.read_fd)
        os.close(self.write_fd)
        fallback.capture = None

    def _in_context(self, capture: Capture, fn, *args):  # type: ignore[no-untyped-def]
        ctx = contextvars.copy_context()
        ctx.run(current.set, capture)
        return ctx.run(fn, *args)

    def test_without_a_capture_text_goes_to_the_file_descriptor(self) -> None:
        print("native", file=self.stream)
        self.stream.buffer.write("bytes é\n".encode())
        self.assertEqual(os.read(self.read_fd, 100), "native\nbytes é\n".encode())

    def test_the_fallback_capture_takes_writes_outside_any_call(self) -> None:
        fallback.capture = Capture()
        thread = threading.Thread(target=lambda: print("from a thread", file=self.stream))
        thread.start()
        thread.join()
        self.assertEqual(fallback.capture.text, "from a thread\n")

    def test_each_context_writes_to_its_own_capture_across_threads(self) -> None:
        captures = [Capture() for _ in range(4)]
        barrier = threading.Barrier(4)

        def work(index: int) -> None:
            for step in range(50):
                if step == 25:
                    barrier.wait()
                print(f"{index}:{step}", file=self.stream)

        threads = [
            threading.Thread(target=self._in_context, args=(captures[i], work, i)) for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for index, capture in enumerate(captures):
            self.assertEqual(capture.text, "".join(f"{index}:{step}\n" for step in range(50)))

    def test_each_asyncio_task_writes_to_its_own_capture(self) -> None:
        captures = [Capture() for _ in range(3)]

        async def work(index: int) -> None:
            for step in range(3):
                print(f"{index}:{step}", file=self.stream)
                await asyncio.sleep(0)

        async def main() -> None:
            tasks = [self._in_context(captures[i], asyncio.ensure_future, work(i)) for i in range(3)]
            await asyncio.gather(*tasks)

        asyncio.run(main())
        for index, capture in enumerate(captures):
            self.assertEqual(capture.text, "".join(f"{index}:{step}\n" for step in range(3)))

    def test_behaves_like_a_text_stream(self) -> None:
        self.assertEqual(self.stream.fileno(), self.write_fd)
        self.assertEqual(self.stream.encoding, "utf-8")
        self.assertFalse(self.stream.isatty())
        self.assertTrue(self.stream.writable())
        self.stream.close()  # shared by every call: closing it is a no-op
        self.assertFalse(self.stream.closed)
        with self.assertRaises(TypeError):
            self.stream.write(b"bytes")  # type: ignore[arg-type]
        capture = Capture()
        self._in_context(capture, self.stream.writelines, ["a", "b\n"])
        self.assertEqual(capture.text, "ab\n")


if __name__ == "__main__":
    unittest.main()
