package io.dollymp.yarn.scheduler.queue;

import io.dollymp.yarn.compat.LineApi;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;

/**
 * The shim's queue tree: built from a {@link QueueConfig} at start-up and rebuilt in place on
 * {@code -refreshQueues} (queues keep their objects, so running applications keep their queue), plus
 * the ACL switches ({@code yarn.acl.enable}, {@code yarn.admin.acl}) and the placement mappings.
 */
public final class QueueTree {
  private final Configuration metricsConf;
  private final Supplier<Resource> cluster;
  private final Consumer<RMContainer> recovered;
  private volatile Map<String, ShimQueue> byPath = Collections.emptyMap();
  private volatile QueueConfig config;
  private volatile boolean aclsEnabled;
  private volatile AccessControlList adminAcl = new AccessControlList("*");

  public QueueTree(Configuration metricsConf, Supplier<Resource> cluster, Consumer<RMContainer> recovered) {
    this.metricsConf = metricsConf;
    this.cluster = cluster;
    this.recovered = recovered;
  }

  /** Reads {@code yarn.acl.enable} and {@code yarn.admin.acl} (YARN's defaults: off, and "*"). */
  public void setAcls(Configuration conf) {
    this.aclsEnabled = conf.getBoolean(YarnConfiguration.YARN_ACL_ENABLE, YarnConfiguration.DEFAULT_YARN_ACL_ENABLE);
    this.adminAcl = new AccessControlList(conf.get(YarnConfiguration.YARN_ADMIN_ACL,
        YarnConfiguration.DEFAULT_YARN_ADMIN_ACL));
  }

  /**
   * Installs {@code next}. On a refresh, a queue that still has applications may be neither removed
   * nor turned from a leaf into a parent (CapacityScheduler refuses both too); the refusal names the
   * queue and nothing changes. {@code applications} counts the applications per leaf path.
   */
  public synchronized void apply(QueueConfig next, Map<String, Integer> applications) throws IOException {
    List<String> errors = new ArrayList<String>();
    for (Map.Entry<String, Integer> e : applications.entrySet()) {
      QueueSettings s = next.queues.get(e.getKey());
      if (e.getValue() > 0 && s == null) {
        errors.add("queue " + e.getKey() + " has " + e.getValue() + " application(s) and cannot be removed");
      } else if (e.getValue() > 0 && !s.isLeaf()) {
        errors.add("queue " + e.getKey() + " has " + e.getValue() + " application(s) and cannot become a parent");
      }
    }
    if (!errors.isEmpty()) {
      throw new IOException("Refusing the new queue configuration: " + String.join("; ", errors));
    }
    Map<String, ShimQueue> old = byPath;
    Map<String, ShimQueue> built = new LinkedHashMap<String, ShimQueue>();
    for (QueueSettings s : next.queues.values()) { // parents come before their children
      int dot = s.path().lastIndexOf('.');
      ShimQueue parent = dot < 0 ? null : built.get(s.path().substring(0, dot));
      ShimQueue q = old.get(s.path());
      if (q == null) {
        q = new ShimQueue(this, parent, s, QueueMetrics.forQueue(s.path(), parent, false, metricsConf));
      } else {
        q.update(s);
      }
      q.children.clear();
      if (parent != null) {
        parent.children.add(q);
      }
      built.put(s.path(), q);
    }
    this.byPath = Collections.unmodifiableMap(built);
    this.config = next;
  }

  public ShimQueue root() {
    return byPath.get(QueueConfigReader.ROOT);
  }

  public List<ShimQueue> all() {
    return new ArrayList<ShimQueue>(byPath.values());
  }

  public List<ShimQueue> leaves() {
    List<ShimQueue> out = new ArrayList<ShimQueue>();
    for (ShimQueue q : byPath.values()) {
      if (q.isLeaf()) {
        out.add(q);
      }
    }
    return out;
  }

  /** The queue called {@code name}: a full path, or a short name that exactly one queue has; else null. */
  public ShimQueue queue(String name) {
    if (name == null) {
      return null;
    }
    Map<String, ShimQueue> queues = byPath;
    ShimQueue q = queues.get(name);
    if (q != null) {
      return q;
    }
    ShimQueue found = null;
    for (ShimQueue candidate : queues.values()) {
      if (candidate.getQueueName().equals(name)) {
        if (found != null) {
          return null;
        }
        found = candidate;
      }
    }
    return found;
  }

  /**
   * The queue an application of {@code user} submitted to {@code submitted} is placed in: the first
   * matching {@code queue-mappings} entry when it was submitted to "default" (or always, with
   * {@code queue-mappings-override.enable}), else the submitted queue.
   */
  public String place(String user, String submitted) {
    QueueConfig c = config;
    if (c.mappings.isEmpty() || !(c.mappingsOverride || "default".equals(submitted))) {
      return submitted;
    }
    java.util.Collection<String> groups = null; // looked up once, at the first group mapping
    for (QueueMapping m : c.mappings) {
      if (m.group && groups == null) {
        groups = LineApi.groups(UserGroupInformation.createRemoteUser(user));
      }
      String target = m.place(user, groups);
      if (target != null) {
        return target;
      }
    }
    return submitted;
  }

  /**
   * Why an application submitted by {@code user} to {@code queueName} is refused, or null when it may
   * run there. Worded like CapacityScheduler's rejections.
   */
  public String rejection(Object appId, String user, String queueName) {
    ShimQueue q = queue(queueName);
    if (q == null) {
      return "Application " + appId + " submitted by user " + user + " to unknown queue: " + queueName;
    }
    if (!q.isLeaf()) {
      return "Application " + appId + " submitted by user " + user + " to non-leaf queue: " + queueName;
    }
    if (q.effectiveState() != QueueState.RUNNING) {
      return "Queue " + q.getQueuePath() + " is STOPPED. Cannot accept submission of application: " + appId;
    }
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
    if (!q.hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi) && !q.hasAccess(QueueACL.ADMINISTER_QUEUE, ugi)) {
      return "User " + user + " does not have permission to submit " + appId + " to queue " + queueName;
    }
    return null;
  }

  /** CapacityScheduler's answer for the queue called {@code queueName}; "Unknown queue: name" otherwise. */
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    ShimQueue q = queue(queueName);
    if (q == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    return q.getQueueInfo(includeChildQueues, recursive);
  }

  public List<QueueUserACLInfo> userAclInfo(UserGroupInformation user) {
    return root().getQueueUserAclInfo(user);
  }

  /** Whether {@code user} holds {@code acl} on the queue called {@code queueName} (false for an unknown queue). */
  public boolean checkAccess(UserGroupInformation user, QueueACL acl, String queueName) {
    ShimQueue q = queue(queueName);
    return q != null && q.hasAccess(acl, user);
  }

  public boolean aclsEnabled() {
    return aclsEnabled;
  }

  public boolean isAdmin(UserGroupInformation user) {
    return adminAcl.isUserAllowed(user);
  }

  Resource clusterResource() {
    return cluster.get();
  }

  void containerRecovered(RMContainer container) {
    recovered.accept(container);
  }
}
