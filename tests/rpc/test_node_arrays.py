"""The mirror's numeric node arrays agree with the accounting computed object by object.

The reference below recomputes every node's free room from the mirrored records alone (the node's
capacity and allocation as upserted, its ContainerRecs, the OutstandingPlacements on it), by the rule of
pyscheduler.service.state.mirror: capacity - max(allocated, containers) - outstanding, per resource type. A
random stream of batches (heartbeats, state and capacity changes, node loss and return, containers confirming
placements, re-reported containers, completions, outcomes, expiries, a full resync, a GPU type appearing
mid-stream) is applied; after each batch the batched, array-backed figures must equal the reference:
`NodeRec.free()`, `Mirror.free_of`, and the core's ClusterState (`cluster_of`, incremental across rounds).
"""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
from round_memories import memory_of
from rpc_harness import app, ask, attempt, full_batch, node

from pyscheduler.service.round.clusterview import cluster_of
from pyscheduler.service.state.mirror import Mirror, OutstandingPlacement, application_of_attempt
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb

NODES = [f"h{i:02d}:1" for i in range(16)]
KEY = (attempt(1), 20, -1)


def _amounts(r: Res, times: int = 1) -> dict[str, int]:
    return {
        "memory_mb": r.memory_mb * times,
        "vcores": r.vcores * times,
        **{k: v * times for k, v in r.others},
    }


def _reference_free(m: Mirror) -> dict[str, dict[str, int]]:
    """Free room per node from the records, object by object (non-zero amounts only)."""
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    held: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in m.containers.values():
        for k, v in _amounts(c.resource).items():
            used[c.node_id][k] += v
    for p in m.outstanding.values():
        for k, v in _amounts(p.capability, p.remaining()).items():
            held[p.node_id][k] += v
    out: dict[str, dict[str, int]] = {}
    for nid, n in m.nodes.items():
        cap, alloc = _amounts(n.capacity), _amounts(n.allocated)
        keys = set(cap) | set(alloc) | set(used[nid]) | set(held[nid])
        free = {
            k: cap.get(k, 0) - max(alloc.get(k, 0), used[nid].get(k, 0)) - held[nid].get(k, 0) for k in keys
        }
        out[nid] = {k: v for k, v in free.items() if v}
    return out


def _nonzero(r: Res) -> dict[str, int]:
    return {k: v for k, v in _amounts(r).items() if v}


def _node_msg(rng: random.Random, nid: str, gpus: bool) -> pb.NodeInfo:
    n = node(
        nid,
        rng.choice([8192, 8192, 16384, 0]),
        rng.choice([8, 8, 4]),
        alloc=(rng.randint(0, 8) * 1024, rng.randint(0, 6)),
    )
    n.state = pb.NODE_STATE_UNHEALTHY if rng.random() < 0.1 else pb.NODE_STATE_RUNNING
    if gpus and rng.random() < 0.5:
        n.capacity.others["gpu"] = rng.randint(0, 4)
    return n


def _container(rng: random.Random, cid: str, pid: str, nid: str, gpus: bool) -> pb.ContainerInfo:
    c = pb.ContainerInfo(
        container_id=cid,
        attempt_id=attempt(1),
        node_id=nid,
        priority=20,
        allocation_request_id=-1,
        placement_id=pid,
        resource=pb.Resource(memory_mb=rng.choice([512, 1024, 2048]), vcores=rng.randint(1, 2)),
    )
    if gpus and rng.random() < 0.3:
        c.resource.others["gpu"] = 1
    return c


def _check(m: Mirror, label: str) -> None:
    ref = _reference_free(m)
    per_node: dict[str, int] = defaultdict(int)
    for c in m.containers.values():
        per_node[c.node_id] += 1
    for nid in set(NODES) | set(per_node):
        assert m.containers_on(nid) == per_node[nid], (label, nid)
    assert m.containers_of(application_of_attempt(attempt(1))) == len(m.containers), label
    for nid, n in m.nodes.items():
        assert _nonzero(n.free()) == ref[nid], (label, nid)
    assert {nid: _nonzero(r) for nid, r in m.free_of(list(m.nodes)).items()} == ref, label
    state = cluster_of(m, memory_of(m))
    running = sorted(
        nid
        for nid, n in m.nodes.items()
        if n.state == pb.NODE_STATE_RUNNING and (n.capacity.memory_mb > 0 or n.capacity.vcores > 0)
    )
    assert state.node_ids == running, label
    for i, nid in enumerate(running):
        cap = _amounts(m.nodes[nid].capacity)
        want_cap = np.array([float(cap.get(d, 0)) for d in state.dims])
        want_free = np.clip([float(ref[nid].get(d, 0)) for d in state.dims], 0.0, want_cap)
        assert np.array_equal(state.capacity[i], want_cap), (label, nid)
        assert np.array_equal(state.free[i], want_free), (label, nid)


def _stream(seed: int, gpus_from: int) -> None:
    rng = random.Random(seed)
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node(n, 8192, 8) for n in NODES],
            apps_upserted=[app(1)],
            asks=[ask(1, 20, 50)],
        )
    )
    _check(m, "resync")
    live: list[str] = []
    pids: list[str] = []
    next_c = 0
    for seq in range(2, 80):
        gpus = seq >= gpus_from
        now = float(seq)
        for j in range(rng.randint(0, 4)):  # placements sent by a round (on mirrored nodes)
            nid = rng.choice(sorted(m.nodes))
            pid = f"p{seq}.{j}"
            m.add_placement(OutstandingPlacement(pid, KEY, nid, Res(1024, 1), rng.randint(1, 4), now))
            pids.append(pid)
        b = pb.StateBatch(session_id="s", seq=seq, full_resync=seq == 50)
        if b.full_resync:
            b.nodes_upserted.extend(_node_msg(rng, n, gpus) for n in NODES)
            b.apps_upserted.append(app(1))
            b.asks.append(ask(1, 20, 50))
        else:
            b.nodes_upserted.extend(_node_msg(rng, n, gpus) for n in rng.sample(NODES, 5))
            if rng.random() < 0.1:
                b.nodes_removed.append(rng.choice(NODES))  # lost; it comes back on a later heartbeat
        for _ in range(rng.randint(0, 12)):  # containers, most confirming a placement; some re-reported
            if live and rng.random() < 0.1:
                cid = rng.choice(live)
            else:
                cid, next_c = f"c{next_c}", next_c + 1
            pid = rng.choice(pids) if pids and rng.random() < 0.8 else ""
            b.containers_allocated.append(_container(rng, cid, pid, rng.choice(NODES), gpus))
            live.append(cid)
        for cid in rng.sample(live, min(len(live), rng.randint(0, 4))):
            b.containers_completed.add(container_id=cid, exit_kind=pb.CONTAINER_EXIT_SUCCESS)
        for pid in rng.sample(pids, min(len(pids), rng.randint(0, 2))):
            kind = rng.choice([pb.PLACEMENT_COMMITTED, pb.PLACEMENT_DROPPED_DOES_NOT_FIT])
            b.outcomes.add(placement_id=pid, kind=kind, containers=rng.randint(0, 2))
        m.apply(b)
        m.expire(now, 8.0)
        live = [c for c in live if c in m.containers]
        _check(m, f"seq {seq}")


def test_array_figures_equal_the_per_object_accounting() -> None:
    for seed in range(4):
        _stream(seed, gpus_from=1000)  # memory and vcores only: the two-column fast paths


def test_array_figures_equal_the_per_object_accounting_with_a_further_type() -> None:
    for seed in range(4):
        _stream(seed, gpus_from=30)  # a "gpu" column appears mid-stream
