"""Run callers at once, as the concurrency and crash tests do, and keep whatever they raise."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


def run_concurrently(
    writers: Sequence[Callable[[], object]],
    workers: Sequence[Callable[[threading.Event], object]] = (),
    during: Callable[[], object] | None = None,
) -> list[BaseException]:
    """Start every writer and worker in a thread of its own, call `during` (if any) while they run, wait
    for the writers, then tell the workers to stop (the event they are given) and wait for them. Returns
    what the threads raised, for the test to assert that nothing was."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(body: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except BaseException as exc:  # collected, the caller asserts on them
                errors.append(exc)

        return run

    writing = [threading.Thread(target=guarded(writer)) for writer in writers]
    working = [threading.Thread(target=guarded(lambda worker=worker: worker(stop))) for worker in workers]
    for thread in writing + working:
        thread.start()
    if during is not None:
        during()
    for thread in writing:
        thread.join()
    stop.set()
    for thread in working:
        thread.join()
    return errors
