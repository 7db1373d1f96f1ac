package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ContainerCompletion;
import io.dollymp.proto.v1.ContainerInfo;
import io.dollymp.proto.v1.PlacementOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;

/**
 * Changes recorded by the RM's threads (event thread, AM RPC threads) for the next StateBatch.
 * Writers only add to concurrent collections: nothing here blocks or touches the network. Entity
 * changes are kept as dirty sets (bounded by cluster size), events as queues drained every tick.
 */
final class Outbox {
  final Set<NodeId> dirtyNodes = ConcurrentHashMap.newKeySet();
  final Queue<NodeId> removedNodes = new ConcurrentLinkedQueue<>();
  final Set<ApplicationId> dirtyApps = ConcurrentHashMap.newKeySet();
  final Set<ApplicationAttemptId> dirtyAsks = ConcurrentHashMap.newKeySet();
  final Queue<ApplicationId> removedApps = new ConcurrentLinkedQueue<>();
  final Queue<ContainerInfo> allocated = new ConcurrentLinkedQueue<>();
  final Queue<ContainerCompletion> completed = new ConcurrentLinkedQueue<>();
  final Queue<PlacementOutcome> outcomes = new ConcurrentLinkedQueue<>();
  /** True after {@code -refreshQueues}: the next batch carries the queue tree again. */
  volatile boolean queuesChanged;
  volatile boolean fallbackSinceLastBatch;

  /** Forgets everything: a full resync is about to describe the whole state. */
  void clear() {
    dirtyNodes.clear();
    removedNodes.clear();
    dirtyApps.clear();
    dirtyAsks.clear();
    removedApps.clear();
    allocated.clear();
    completed.clear();
    outcomes.clear();
  }

  static <T> List<T> drain(Queue<T> queue) {
    List<T> out = new ArrayList<>();
    for (T item = queue.poll(); item != null; item = queue.poll()) {
      out.add(item);
    }
    return out;
  }

  static <T> List<T> drain(Set<T> set) {
    List<T> out = new ArrayList<>(set);
    set.removeAll(out);
    return out;
  }
}
