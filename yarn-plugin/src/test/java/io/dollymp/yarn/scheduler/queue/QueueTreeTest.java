package io.dollymp.yarn.scheduler.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The capacity-scheduler.xml subset: validation naming the key, the tree, ACL inheritance, placement. */
class QueueTreeTest {
  private static final String P = QueueConfigReader.PREFIX;

  @BeforeEach
  @AfterEach
  void resetMetrics() {
    QueueTrees.resetMetrics();
  }

  /** root -> eng (60%, max 80%) -> {batch 50%, adhoc 50%}; root -> ops (40%). */
  static Configuration twoLevels() {
    Configuration c = new Configuration(false);
    c.set(P + "root.queues", "eng,ops");
    c.set(P + "root.eng.queues", "batch,adhoc");
    c.set(P + "root.eng.capacity", "60");
    c.set(P + "root.eng.maximum-capacity", "80");
    c.set(P + "root.ops.capacity", "40");
    c.set(P + "root.eng.batch.capacity", "50");
    c.set(P + "root.eng.adhoc.capacity", "50");
    c.set(P + "root.eng.adhoc.user-limit-factor", "2");
    c.set(P + "root.acl_submit_applications", " ");
    c.set(P + "root.acl_administer_queue", " ");
    c.set(P + "root.eng.acl_submit_applications", "alice");
    c.set(P + "root.ops.acl_administer_queue", "carol");
    return c;
  }

  private static QueueTree tree(Configuration c, boolean acls) throws IOException {
    Configuration aclConf = new Configuration(false);
    aclConf.setBoolean("yarn.acl.enable", acls);
    aclConf.set("yarn.admin.acl", "admin");
    return QueueTrees.of(c, aclConf);
  }

  private static String error(Configuration c) {
    return assertThrows(IllegalArgumentException.class, () -> QueueConfigReader.read(c)).getMessage();
  }

  @Test
  void noConfigurationIsTheStockTree() throws IOException {
    QueueTree t = tree(new Configuration(false), false);
    assertEquals("root.default", t.queue("default").getQueuePath());
    assertEquals(1.0f, t.queue("root.default").absoluteCapacity(), 1e-6);
  }

  @Test
  void treeAnswersByPathAndShortNameWithAbsoluteCapacities() throws IOException {
    QueueTree t = tree(twoLevels(), true);
    assertEquals("root.eng.batch", t.queue("batch").getQueuePath());
    assertEquals(0.3f, t.queue("batch").absoluteCapacity(), 1e-6);
    assertEquals(0.8f, t.queue("root.eng.adhoc").absoluteMaximumCapacity(), 1e-6);
    assertEquals(2f, t.queue("adhoc").settings().userLimitFactor(), 1e-6);
    assertNull(t.queue("nosuch"));
    QueueInfo root = t.getQueueInfo("root", true, true);
    assertEquals(2, root.getChildQueues().size());
    assertEquals(2, root.getChildQueues().get(0).getChildQueues().size(), "recursive answer has grandchildren");
    assertEquals(0.6f, root.getChildQueues().get(0).getCapacity(), 1e-6);
    assertEquals("Unknown queue: nosuch",
        assertThrows(IOException.class, () -> t.getQueueInfo("nosuch", false, false)).getMessage());
  }

  @Test
  void invalidValuesAreRefusedNamingTheKey() {
    Configuration c = twoLevels();
    c.set(P + "root.ops.capacity", "30");
    assertTrue(error(c).contains(P + "root.queues=eng,ops: the children's capacities sum to 90.0"), error(c));
    c = twoLevels();
    c.set(P + "root.eng.maximum-capacity", "50");
    assertTrue(error(c).contains(P + "root.eng.maximum-capacity=50.0: must not be below"), error(c));
    c = twoLevels();
    c.set(P + "root.ops.state", "PAUSED");
    assertTrue(error(c).contains(P + "root.ops.state=PAUSED: expected RUNNING or STOPPED"), error(c));
    c = twoLevels();
    c.set(P + "root.ops.capacity", "40w");
    assertTrue(error(c).contains(P + "root.ops.capacity=40w: weights"), error(c));
    c = twoLevels();
    c.set(P + "root.ops.user-limit-factor", "0");
    assertTrue(error(c).contains(P + "root.ops.user-limit-factor=0.0"), error(c));
    c = twoLevels();
    c.set(QueueConfigReader.MAPPINGS, "u:bob:eng");
    assertTrue(error(c).contains("'u:bob:eng' maps to eng, which is not a leaf queue"), error(c));
    c = twoLevels();
    c.set(P + "root.queues", "eng,bad.name");
    assertTrue(error(c).contains("queue name 'bad.name'"), error(c));
  }

  @Test
  void amPercentIsTheQueuesOwnElseTheGlobalKeyElseUnsetAndIsValidated() throws IOException {
    Configuration c = twoLevels();
    c.set(P + "root.eng.batch.maximum-am-resource-percent", "0.3");
    QueueTree t = tree(c, false);
    assertEquals(0.3f, t.queue("batch").settings().maximumAmResourcePercent(), 1e-6);
    assertTrue(Float.isNaN(t.queue("adhoc").settings().maximumAmResourcePercent()), "no key: no per-queue limit");
    c.set(QueueConfigReader.MAX_AM_PERCENT, "0.1");
    QueueConfig read = QueueConfigReader.read(c);
    assertEquals(0.3f, read.queues().get("root.eng.batch").maximumAmResourcePercent(), 1e-6, "its own key wins");
    assertEquals(0.1f, read.queues().get("root.eng.adhoc").maximumAmResourcePercent(), 1e-6, "the global key");
    assertFalse(read.warnings().stream().anyMatch(w -> w.contains("maximum-am-resource-percent")), "read, not ignored");
    c.set(QueueConfigReader.MAX_AM_PERCENT, "1.5");
    assertTrue(error(c).contains(QueueConfigReader.MAX_AM_PERCENT + "=1.5: must be in (0, 1]"), error(c));
    c = twoLevels();
    c.set(P + "root.ops.maximum-am-resource-percent", "0");
    assertTrue(error(c).contains(P + "root.ops.maximum-am-resource-percent=0.0: must be in (0, 1]"), error(c));
    c.set(P + "root.ops.maximum-am-resource-percent", "ten");
    assertTrue(error(c).contains(P + "root.ops.maximum-am-resource-percent=ten: not a number"), error(c));
    c = twoLevels();
    c.set(P + "root.ops.user-limit-factor", "-2");
    assertTrue(error(c).contains(P + "root.ops.user-limit-factor=-2.0: must be > 0 (or -1 for no limit)"), error(c));
  }

  @Test
  void unsupportedKeysAreReportedNotUsed() {
    Configuration c = twoLevels();
    c.set(P + "root.eng.batch.ordering-policy", "fair");
    assertTrue(QueueConfigReader.read(c).warnings().contains(P + "root.eng.batch.ordering-policy is not read by the"
        + " DollyMP scheduler (ignored)"));
  }

  @Test
  void aclsAreInheritedDownTheTreeAndAdminsMayDoAnything() throws IOException {
    QueueTree t = tree(twoLevels(), true);
    UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
    UserGroupInformation bob = UserGroupInformation.createRemoteUser("bob");
    UserGroupInformation carol = UserGroupInformation.createRemoteUser("carol");
    UserGroupInformation admin = UserGroupInformation.createRemoteUser("admin");
    assertTrue(t.checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "batch"), "allowed at the parent eng");
    assertFalse(t.checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "ops"));
    assertFalse(t.checkAccess(alice, QueueACL.ADMINISTER_QUEUE, "batch"));
    assertFalse(t.checkAccess(bob, QueueACL.SUBMIT_APPLICATIONS, "batch"));
    assertTrue(t.checkAccess(carol, QueueACL.ADMINISTER_QUEUE, "root.ops"));
    assertTrue(t.checkAccess(admin, QueueACL.ADMINISTER_QUEUE, "batch"), "yarn.admin.acl");
    assertFalse(t.checkAccess(admin, QueueACL.SUBMIT_APPLICATIONS, "nosuch"), "unknown queue");
    assertNull(t.rejection("app_1", "alice", "batch"));
    assertNull(t.rejection("app_1", "carol", "ops"), "a queue administrator may submit");
    assertEquals("User bob does not have permission to submit app_1 to queue batch",
        t.rejection("app_1", "bob", "batch"));
    assertEquals("Application app_1 submitted by user alice to unknown queue: nosuch",
        t.rejection("app_1", "alice", "nosuch"));
    assertEquals("Application app_1 submitted by user alice to non-leaf queue: eng",
        t.rejection("app_1", "alice", "eng"));
    QueueTree open = tree(twoLevels(), false);
    assertTrue(open.checkAccess(bob, QueueACL.SUBMIT_APPLICATIONS, "batch"), "yarn.acl.enable off");
  }

  @Test
  void stoppedParentStopsItsLeaves() throws IOException {
    Configuration c = twoLevels();
    c.set(P + "root.eng.state", "STOPPED");
    QueueTree t = tree(c, false);
    assertEquals("Queue root.eng.batch is STOPPED. Cannot accept submission of application: app_1",
        t.rejection("app_1", "alice", "batch"));
  }

  @Test
  void mappingsPlaceApplicationsSubmittedToDefault() throws IOException {
    Configuration c = twoLevels();
    c.set(QueueConfigReader.MAPPINGS, "u:alice:batch,u:%user:adhoc");
    QueueTree t = tree(c, false);
    assertEquals("batch", t.place("alice", "default"));
    assertEquals("adhoc", t.place("bob", "default"));
    assertEquals("ops", t.place("alice", "ops"), "an explicit queue wins without override");
    c.setBoolean(QueueConfigReader.MAPPINGS_OVERRIDE, true);
    assertEquals("batch", tree(c, false).place("alice", "ops"));
  }

  @Test
  void refreshKeepsQueueObjectsAndRefusesToDropAQueueWithApplications() throws IOException {
    QueueTree t = tree(twoLevels(), false);
    ShimQueue batch = t.queue("batch");
    Configuration c = twoLevels();
    c.set(P + "root.eng.capacity", "70");
    c.set(P + "root.ops.capacity", "30");
    t.apply(QueueConfigReader.read(c), Collections.singletonMap("root.eng.batch", 1));
    assertTrue(batch == t.queue("batch"), "the same queue object after a refresh");
    assertEquals(0.35f, batch.absoluteCapacity(), 1e-6);
    Configuration fewer = twoLevels();
    fewer.set(P + "root.eng.queues", "adhoc");
    fewer.set(P + "root.eng.adhoc.capacity", "100");
    IOException e = assertThrows(IOException.class,
        () -> t.apply(QueueConfigReader.read(fewer), Collections.singletonMap("root.eng.batch", 2)));
    assertTrue(e.getMessage().contains("queue root.eng.batch has 2 application(s) and cannot be removed"),
        e.getMessage());
    assertEquals(0.35f, t.queue("batch").absoluteCapacity(), 1e-6, "nothing changed");
  }
}
