"""Writer process for the kill -9 test: appends decisions forever, printing the ids of each committed batch.

Usage: python kill9_writer.py STORE_URL append|background BATCH
Prints one line per committed batch: "<first id> <last id>", flushed as soon as the commit returned.
"""

from __future__ import annotations

import sys

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import BackgroundWriter, open_store


def main() -> None:
    url, mode, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = open_store(url)
    writer = BackgroundWriter(store, linger_s=0.0) if mode == "background" else None
    print("ready", flush=True)
    n = 0
    while True:
        batch = [
            Decision(time=float(n + i), kind=DecisionKind.PLACEMENT, reason="best_fit", node_id=f"n{i}")
            for i in range(size)
        ]
        n += size
        if writer is None:
            ids = store.append(batch)
            first, last = ids[0], ids[-1]
        else:
            before = writer.last_id
            writer.submit(batch)
            last = writer.flush()
            first = before + 1
        print(first, last, flush=True)


if __name__ == "__main__":
    main()
