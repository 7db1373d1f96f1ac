package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.client.DecisionClient;
import io.dollymp.yarn.scheduler.client.SessionEvent;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import io.dollymp.yarn.scheduler.queue.QueueConfig;
import io.dollymp.yarn.scheduler.queue.QueueConfigReader;
import io.dollymp.yarn.scheduler.queue.QueueLoader;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import java.io.IOException;
import java.util.Map;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;

/**
 * {@code yarn rmadmin -refreshQueues} for the shim: re-reads the queue tree, the ACL switches and the
 * shim's {@code yarn.scheduler.dollymp.*} keys, all validated before anything changes.
 */
final class QueueRefresh {
  private QueueRefresh() {}

  /** Validates and installs the new queues and ACLs; returns the new shim settings. Throws naming the key. */
  static ShimConfig refresh(Configuration startConf, Configuration reloaded, RMContext context, QueueTree queues,
      Map<String, Integer> applicationsByQueue) throws IOException {
    Configuration layered = QueueLoader.layered(startConf, reloaded,
        context == null ? null : context.getConfigurationProvider());
    ShimConfig next;
    QueueConfig tree;
    try {
      next = ShimConfig.from(layered);
      tree = QueueConfigReader.read(layered);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    queues.apply(tree, applicationsByQueue);
    queues.setAcls(layered);
    for (String warning : tree.warnings()) {
      DollyMPScheduler.LOG.warn("DollyMP: {}", warning);
    }
    DollyMPScheduler.LOG.info("DollyMP: queues refreshed ({} queues)", tree.queues().size());
    return next;
  }

  /**
   * Replaces the client after its connection settings changed: the old session ends (as a lost session
   * does, so the fallback's grace period applies) and the new client registers with a full resync.
   */
  static DecisionClient restartClient(DecisionClient old, ShimConfig next, SessionStateMachine session,
      BatchBuilder view, Function<ShimConfig, DecisionClient> factory) {
    old.stop();
    SessionState s = session.state();
    if (s == SessionState.REGISTERED || s == SessionState.RECOVERING || s == SessionState.RUNNING) {
      session.fire(SessionEvent.RESYNC_REQUIRED);
    }
    view.sessionLost();
    DecisionClient fresh = factory.apply(next);
    fresh.start();
    DollyMPScheduler.LOG.info("DollyMP: reconnecting to the decision service at {}:{} with the refreshed settings",
        next.serviceHost(), next.servicePort());
    return fresh;
  }
}
