package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.queue.QueueTree;
import io.dollymp.yarn.scheduler.queue.ShimQueue;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The queue-facing part of YarnScheduler, answered from the shim's {@link QueueTree}: queue info and ACLs,
 * the applications in a queue, moves between queues ({@link QueueMoves}), and each queue's headroom and
 * available-resource metrics. What reads the applications or the ledger's sums runs under the scheduler's
 * monitor, as their changes do.
 */
final class QueueFacade {
  private final DollyMPScheduler scheduler;
  private final QueueTree queues;
  private final QueueMoves moves;
  private final ContainerLedger ledger;
  private final Map<ApplicationId, SchedulerApplication<ShimAppAttempt>> applications;

  QueueFacade(DollyMPScheduler scheduler, QueueTree queues, Outbox outbox, ContainerLedger ledger) {
    this.scheduler = scheduler;
    this.queues = queues;
    this.moves = new QueueMoves(scheduler, queues, outbox);
    this.ledger = ledger;
    this.applications = scheduler.getSchedulerApplications();
  }

  QueueInfo queueInfo(String queueName, boolean includeChildQueues, boolean recursive) throws IOException {
    return queues.getQueueInfo(queueName, includeChildQueues, recursive);
  }

  List<QueueUserACLInfo> userAclInfo() {
    try {
      return queues.userAclInfo(UserGroupInformation.getCurrentUser());
    } catch (IOException e) {
      DollyMPScheduler.LOG.warn("DollyMP: no current user for queue ACL info: {}", e.toString());
      return new ArrayList<>();
    }
  }

  boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queues.checkAccess(callerUGI, acl, queueName);
  }

  QueueMetrics rootMetrics() {
    return queues.root().getMetrics();
  }

  void validateMove(ApplicationId appId, String targetQueue) throws YarnException {
    moves.validate(appId, targetQueue);
  }

  String move(ApplicationId appId, String targetQueue) throws YarnException {
    return moves.move(appId, targetQueue);
  }

  /** The current attempts of the applications in {@code queueName} or below it; null for an unknown queue. */
  List<ApplicationAttemptId> appsInQueue(String queueName) {
    synchronized (scheduler) {
      ShimQueue q = queues.queue(queueName);
      if (q == null) {
        return null; // CapacityScheduler's answer for a queue that does not exist
      }
      String path = q.getQueuePath();
      List<ApplicationAttemptId> out = new ArrayList<>();
      for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
        String appQueue = ((ShimQueue) app.getQueue()).getQueuePath();
        boolean inside = appQueue.equals(path) || appQueue.startsWith(path + ".");
        if (inside && app.getCurrentAppAttempt() != null) {
          out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
        }
      }
      return out;
    }
  }

  /** How many applications each leaf queue holds (by path). */
  Map<String, Integer> applicationsByQueue() {
    synchronized (scheduler) {
      Map<String, Integer> out = new HashMap<>();
      for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
        out.merge(((ShimQueue) app.getQueue()).getQueuePath(), 1, Integer::sum);
      }
      return out;
    }
  }

  /** Sets every current attempt's headroom: its queue's, after the queues' metrics are brought up to date. */
  void updateHeadroomAndMetrics() {
    synchronized (scheduler) {
      Map<ShimQueue, Resource> headroom = updateAvailableResourcesMetrics();
      for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
        ShimAppAttempt attempt = app.getCurrentAppAttempt();
        Resource room = headroom.get(app.getQueue());
        if (attempt != null && room != null) {
          attempt.setHeadroom(room);
        }
      }
    }
  }

  /** Each queue's headroom: the cluster's free resources, within what its maximum capacity leaves. */
  Map<ShimQueue, Resource> updateAvailableResourcesMetrics() {
    synchronized (scheduler) {
      Resource cluster = scheduler.getClusterResource();
      Resource free = ledger.free(cluster);
      Map<ShimQueue, Resource> out = new HashMap<>();
      for (ShimQueue q : queues.all()) {
        Resource room = Resources.componentwiseMax(Resources.none(),
            Resources.subtract(Resources.multiply(cluster, q.absoluteMaximumCapacity()), q.used()));
        room = Resources.componentwiseMin(free, room);
        q.getMetrics().setAvailableResourcesToQueue(room);
        out.put(q, room);
      }
      return out;
    }
  }
}
