package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.queue.ShimQueue;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The queue limits the fallback policy keeps while the decision service is down, so that one tenant cannot take
 * over the cluster meanwhile: no queue (nor any of its parents) above its maximum capacity, and no user of a leaf
 * above the leaf's guaranteed capacity times its user-limit-factor (a user holding nothing in the leaf may take
 * one container). Shares are dominant shares of the cluster, as everywhere in the shim. Guarantees between
 * queues, the AM percent per queue and minimum-user-limit-percent are the service's (the shim's cluster-wide
 * AM share still applies).
 */
final class FallbackLimits {
  private static final float EPS = 1e-6f;
  private final ResourceCalculator calculator;
  private final Resource cluster;
  private final Map<String, Resource> queueUsed = new HashMap<>();
  private final Map<String, Resource> userUsed = new HashMap<>();

  FallbackLimits(ResourceCalculator calculator, Resource cluster, List<ShimAppAttempt> attempts) {
    this.calculator = calculator;
    this.cluster = cluster;
    for (ShimAppAttempt a : attempts) {
      add(a, a.getCurrentConsumption());
    }
  }

  private static ShimQueue leaf(ShimAppAttempt a) {
    Queue q = a.getQueue();
    return q instanceof ShimQueue ? (ShimQueue) q : null;
  }

  private float share(Resource r) {
    return Resources.divide(calculator, cluster, r, cluster);
  }

  private static Resource get(Map<String, Resource> m, String k) {
    Resource r = m.get(k);
    return r == null ? Resources.none() : r;
  }

  /** Why one more container of {@code ask} for {@code a} would break a limit, or null. */
  String refuses(ShimAppAttempt a, Resource ask) {
    ShimQueue leaf = leaf(a);
    if (leaf == null || cluster.getMemorySize() <= 0) {
      return null;
    }
    for (ShimQueue q = leaf; q != null; q = q.parent()) {
      float after = share(Resources.add(get(queueUsed, q.getQueuePath()), ask));
      if (after > q.absoluteMaximumCapacity() + EPS) {
        return q.getQueuePath() + " would hold " + after + " of the cluster, above its maximum capacity "
            + q.absoluteMaximumCapacity();
      }
    }
    float factor = leaf.settings().userLimitFactor();
    if (factor > 0f) {
      float limit = Math.min(leaf.absoluteMaximumCapacity(), leaf.absoluteCapacity() * factor);
      Resource held = get(userUsed, leaf.getQueuePath() + "\u0000" + a.getUser());
      float after = share(Resources.add(held, ask));
      if (after > limit + EPS && share(held) > 0f) {
        return "user " + a.getUser() + " in " + leaf.getQueuePath() + " would hold " + after
            + " of the cluster, above the user limit " + limit;
      }
    }
    return null;
  }

  /** Records a container {@code a} took. */
  void add(ShimAppAttempt a, Resource r) {
    ShimQueue leaf = leaf(a);
    if (leaf == null) {
      return;
    }
    for (ShimQueue q = leaf; q != null; q = q.parent()) {
      queueUsed.put(q.getQueuePath(), Resources.add(get(queueUsed, q.getQueuePath()), r));
    }
    String user = leaf.getQueuePath() + "\u0000" + a.getUser();
    userUsed.put(user, Resources.add(get(userUsed, user), r));
  }
}
