"""Where the reproduction report's runs go when they run at once: this machine's processes (`dollymp report
--jobs N`) or tasks on a Ray cluster (`--ray ADDRESS`). Either way each call's result comes back to the
caller as it finishes, so the report gathers them one way whatever ran them. Ray is imported here alone,
and only for `--ray`: nothing else depends on it (the `ray` extra).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TypeVar

T = TypeVar("T")

# The `--ray` addresses that name no host, as ray.init reads them: `auto` joins the cluster that `ray start`
# left on this machine (or RAY_ADDRESS's), `local` starts one in this process on this machine's cores and
# stops it when the report is written.
NAMED = ("auto", "local")


class Unreachable(Exception):
    """No Ray cluster could be joined at the address given; the message says why."""


def completed(
    fn: Callable[..., T], calls: Sequence[tuple[object, ...]], jobs: int = 1, ray_address: str | None = None
) -> Iterator[tuple[int, T]]:
    """fn(*call) for each of `calls`, `jobs` at a time in processes, or as tasks on the Ray cluster at
    `ray_address`: yields (the call's index, its result) as each one finishes."""
    if ray_address is None:
        yield from _in_processes(fn, calls, jobs)
    else:
        yield from _on_ray(fn, calls, ray_address)


def _in_processes(
    fn: Callable[..., T], calls: Sequence[tuple[object, ...]], jobs: int
) -> Iterator[tuple[int, T]]:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(fn, *call): i for i, call in enumerate(calls)}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def _on_ray(
    fn: Callable[..., T], calls: Sequence[tuple[object, ...]], address: str
) -> Iterator[tuple[int, T]]:
    _check_answers(address)
    import ray  # only for --ray

    try:
        ray.init(address=address)
    except (ConnectionError, RuntimeError, ValueError) as e:
        # `auto` with no cluster here, no node to join yet, another Ray or Python there, an unreadable address
        raise Unreachable(str(e)) from e
    try:
        task = ray.remote(fn)  # one CPU a call, as one process of --jobs; a task whose worker died runs again
        index = {task.remote(*call): i for i, call in enumerate(calls)}
        pending = list(index)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield index[done[0]], ray.get(done[0])
    finally:
        ray.shutdown()  # leaves the cluster running (a `local` one stops)


def _check_answers(address: str) -> None:
    """Refuse at once a HOST:PORT where nothing listens: ray.init retries one for minutes, then exits."""
    if address in NAMED or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise Unreachable(f"not HOST:PORT, {' or '.join(NAMED)}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise Unreachable(f"no Ray cluster answers there ({e})") from e
