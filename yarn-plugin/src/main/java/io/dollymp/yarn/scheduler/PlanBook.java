package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.PlacementOutcome;
import io.dollymp.proto.v1.PlacementOutcomeKind;
import io.dollymp.proto.v1.Plan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Proposals from the service's plans, waiting to be committed (at once by {@link PlanArrivalCommits}, or on
 * their node's next heartbeat). Plans are
 * additive; each proposal ends in exactly one outcome (committed or dropped with a reason), which
 * goes back to the service in the next batch. A lost session voids all proposals (generation).
 */
final class PlanBook {
  /** One placement as received, with when and under which epoch/generation. */
  static final class Proposal {
    private final Placement placement;
    private final long epoch;
    private final long generation;
    private final long receivedMs;

    Proposal(Placement placement, long epoch, long generation, long receivedMs) {
      this.placement = placement;
      this.epoch = epoch;
      this.generation = generation;
      this.receivedMs = receivedMs;
    }

    Placement placement() {
      return placement;
    }

    long epoch() {
      return epoch;
    }

    long generation() {
      return generation;
    }

    long receivedMs() {
      return receivedMs;
    }
  }

  private final Map<String, Queue<Proposal>> byNode = new ConcurrentHashMap<>();
  private final AtomicLong generation = new AtomicLong();
  private volatile long lastEpoch = -1;
  final AtomicLong received = new AtomicLong();
  final AtomicLong committed = new AtomicLong();
  /** Of {@link #committed}: containers of placements the service marked as clones (idle capacity). */
  final AtomicLong clonesCommitted = new AtomicLong();
  final Map<PlacementOutcomeKind, AtomicLong> dropped = new ConcurrentHashMap<>();
  /** A container the service asked to preempt and the application it named as the container's owner. */
  static final class Kill {
    private final String containerId;
    private final String applicationId;

    Kill(String containerId, String applicationId) {
      this.containerId = containerId;
      this.applicationId = applicationId;
    }

    String containerId() {
      return containerId;
    }

    String applicationId() {
      return applicationId;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Kill)) {
        return false;
      }
      Kill k = (Kill) o;
      return containerId.equals(k.containerId) && applicationId.equals(k.applicationId);
    }

    @Override
    public int hashCode() {
      return 31 * containerId.hashCode() + applicationId.hashCode();
    }

    @Override
    public String toString() {
      return "Kill[" + containerId + " of " + applicationId + "]";
    }
  }

  /** Kill requests (Plan.kill_container_ids with kill_application_ids), until the event thread takes them. */
  private final Queue<Kill> kills = new ConcurrentLinkedQueue<>();
  /** Containers preempted at the service's request; kill requests refused (stale plan, unknown, AM). */
  final AtomicLong killsCommitted = new AtomicLong();
  final AtomicLong killsRefused = new AtomicLong();

  /** Adds a plan's placements. A plan whose epoch is not newer than the last one is stale. */
  List<PlacementOutcome> add(Plan plan, long nowMs) {
    List<PlacementOutcome> rejected = new ArrayList<>();
    if (plan.getEpoch() <= lastEpoch) {
      for (Placement p : plan.getPlacementsList()) {
        rejected.add(outcome(p, PlacementOutcomeKind.PLACEMENT_DROPPED_STALE_EPOCH, p.getCount(),
            "plan epoch " + plan.getEpoch() + " <= " + lastEpoch));
      }
      killsRefused.addAndGet(plan.getKillContainerIdsCount());
      return rejected;
    }
    lastEpoch = plan.getEpoch();
    for (int i = 0; i < plan.getKillContainerIdsCount(); i++) {
      // No application named: the kill is refused on commit (the owner cannot be checked).
      String app = i < plan.getKillApplicationIdsCount() ? plan.getKillApplicationIds(i) : "";
      kills.add(new Kill(plan.getKillContainerIds(i), app));
    }
    long gen = generation.get();
    for (Placement p : plan.getPlacementsList()) {
      received.incrementAndGet();
      byNode.computeIfAbsent(p.getNodeId(), k -> new ConcurrentLinkedQueue<>())
          .add(new Proposal(p, plan.getEpoch(), gen, nowMs));
    }
    return rejected;
  }

  /** Takes every proposal for {@code nodeId} (the caller commits or drops each). */
  List<Proposal> take(String nodeId) {
    Queue<Proposal> queue = byNode.get(nodeId);
    return queue == null ? Collections.<Proposal>emptyList() : Outbox.drain(queue);
  }

  /** The nodes that have proposals waiting (a snapshot; the caller takes each node's with {@link #take}). */
  List<String> nodesWithProposals() {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Queue<Proposal>> e : byNode.entrySet()) {
      if (!e.getValue().isEmpty()) {
        out.add(e.getKey());
      }
    }
    return out;
  }

  /** Whether a kill request is waiting. */
  boolean hasKills() {
    return !kills.isEmpty();
  }

  /** Takes every kill request received so far (the caller, on the event thread, carries out or refuses each). */
  List<Kill> takeKills() {
    return Outbox.drain(kills);
  }

  boolean isCurrent(Proposal p) {
    return p.generation() == generation.get();
  }

  /** Voids every proposal: the session they belonged to is gone. */
  void invalidate() {
    generation.incrementAndGet();
    byNode.clear();
    killsRefused.addAndGet(Outbox.drain(kills).size());
    lastEpoch = -1;
  }

  /** Proposals older than {@code maxAgeMs} on nodes that did not heartbeat in time. */
  List<PlacementOutcome> expire(long nowMs, long maxAgeMs) {
    List<PlacementOutcome> out = new ArrayList<>();
    for (Queue<Proposal> queue : byNode.values()) {
      queue.removeIf(p -> {
        if (nowMs - p.receivedMs() <= maxAgeMs) {
          return false;
        }
        out.add(outcome(p.placement(), PlacementOutcomeKind.PLACEMENT_DROPPED_EXPIRED, p.placement().getCount(),
            "node did not heartbeat within " + maxAgeMs + " ms"));
        return true;
      });
    }
    return out;
  }

  PlacementOutcome outcome(Placement p, PlacementOutcomeKind kind, int containers, String detail) {
    if (kind == PlacementOutcomeKind.PLACEMENT_COMMITTED) {
      committed.addAndGet(containers);
      if (p.getIsClone()) {
        clonesCommitted.addAndGet(containers);
      }
    } else {
      dropped.computeIfAbsent(kind, k -> new AtomicLong()).addAndGet(containers);
    }
    return PlacementOutcome.newBuilder().setPlacementId(p.getPlacementId()).setKind(kind)
        .setContainers(containers).setDetail(detail).build();
  }
}
