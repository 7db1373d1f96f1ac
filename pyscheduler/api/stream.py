"""The server-sent-event stream of new decisions (GET /v1/decisions/stream).

The stream polls the log by keyset (id > last sent), so it sees decisions committed by any process
writing the same store, never repeats one and never skips one: ids are assigned in commit order
(pyscheduler.store.log), so once the log's latest id is L, no decision with id <= L can appear later.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import NamedTuple

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from pyscheduler.api.models import DecisionOut
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import DecisionLog, Page, StoreError

_PAGE = 500


class Filters(NamedTuple):
    application_id: str | None
    job_id: str | None
    node_id: str | None
    task_id: str | None
    kinds: tuple[DecisionKind, ...]

    def page(self, store: DecisionLog, cursor: int) -> Page:
        return store.query(
            application_id=self.application_id,
            job_id=self.job_id,
            node_id=self.node_id,
            task_id=self.task_id,
            kinds=self.kinds,
            cursor=cursor,
            limit=_PAGE,
        )


def _event(item: DecisionOut) -> str:
    data = json.dumps(item.model_dump(mode="json"), separators=(",", ":"))
    return f"id: {item.id}\nevent: decision\ndata: {data}\n\n"


async def decision_events(
    request: Request,
    store: DecisionLog,
    after: int,
    filters: Filters,
    poll_s: float,
    keepalive_s: float,
) -> AsyncIterator[str]:
    cursor = after
    yield f": decisions after {cursor}\nretry: {int(poll_s * 4000)}\n\n"
    quiet_since = time.monotonic()
    while not await request.is_disconnected():
        try:
            latest = await run_in_threadpool(store.latest_id)
            page = await run_in_threadpool(filters.page, store, cursor)
        except StoreError:
            yield "event: error\ndata: decision log unavailable\n\n"
            await asyncio.sleep(max(poll_s, 1.0))
            continue
        for stored in page.items:
            yield _event(DecisionOut.of(stored))
        if page.items:
            cursor = page.items[-1].id
            quiet_since = time.monotonic()
            if page.next_cursor is not None:
                continue  # more already waiting: no sleep
        else:
            cursor = max(cursor, latest)  # nothing up to `latest` matched; never rescan it
            if time.monotonic() - quiet_since >= keepalive_s:
                yield ": keep-alive\n\n"
                quiet_since = time.monotonic()
        await asyncio.sleep(poll_s)
