package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.compat.LineApi;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.AclClusters;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Queues the way operators know them, through a real RM with the shim and the real decision service
 * (issue 30 part 1, issue 28 part 4). The RM reads its configuration from a file-system store (as an
 * HA pair does), so {@code -refreshQueues} re-reads real {@code yarn-site.xml} and
 * {@code capacity-scheduler.xml} files: root -> a (60%, alice submits, carol administers) and
 * b (40%, at most 50%, bob submits); the test's own user is the YARN admin.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class QueuesAndAclsIT {
  private static final String NAME = "dollymp-queues-acls";
  private static final Path WORK = Paths.get("target", "queues-acls-it").toAbsolutePath();
  private static final Path STORE = WORK.resolve("conf-store");
  private static final String CS = "yarn.scheduler.capacity.";
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static ApplicationId aliceApp;
  private static ApplicationId aliceSecond;

  @BeforeAll
  static void start() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(STORE);
    writeQueues(60, 40);
    writeYarnSite(0.5);
    int grpcPort;
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    cluster = MiniClusters.startWithShim(NAME, 2, AclClusters.conf(grpcPort, STORE), 30_000);
    shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
    if (service != null) {
      service.close();
    }
  }

  private static void writeQueues(int a, int b) throws IOException {
    write(STORE.resolve("capacity-scheduler.xml"), CS + "root.queues", "a,b", CS + "root.acl_submit_applications", " ",
        CS + "root.acl_administer_queue", " ", CS + "root.a.capacity", Integer.toString(a),
        CS + "root.a.acl_submit_applications", "alice", CS + "root.a.acl_administer_queue", "carol",
        CS + "root.b.capacity", Integer.toString(b), CS + "root.b.maximum-capacity", "50",
        CS + "root.b.acl_submit_applications", "bob");
  }

  private static void writeYarnSite(double amShare) throws IOException {
    write(STORE.resolve("yarn-site.xml"), ShimConfig.AM_SHARE_MAX, Double.toString(amShare));
  }

  private static void write(Path file, String... keyValues) throws IOException {
    AclClusters.writeSite(file, keyValues);
  }

  /** Runs {@code body} with a YarnClient whose RPCs carry {@code user}'s identity. */
  private static <T> T as(String user, AclClusters.ClientCall<T> body) throws Exception {
    return AclClusters.client(cluster.getConfig(), user, body);
  }

  private static ApplicationId submit(YarnClient yc, String queue) throws Exception {
    ApplicationSubmissionContext ctx = yc.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName("acl-" + queue);
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setResource(Resource.newInstance(256, 1));
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    yc.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  /** QueueInfo.getQueuePath where the line has it (3.4 and later), else the name. */
  private static String pathOrName(QueueInfo info) throws ReflectiveOperationException {
    try {
      return (String) QueueInfo.class.getMethod("getQueuePath").invoke(info);
    } catch (NoSuchMethodException e) {
      return info.getQueueName();
    }
  }

  private static YarnApplicationState state(ApplicationId id) throws Exception {
    return as("admin-reader", yc -> yc.getApplicationReport(id).getYarnApplicationState());
  }

  @Test
  @Order(1)
  void queueStatusAnswersForRootLeavesAndUnknownNames() throws Exception {
    String me = UserGroupInformation.getCurrentUser().getShortUserName();
    as(me, yc -> {
      assertNotNull(yc.getQueueInfo("root"));
      assertEquals(List.of("a", "b"), yc.getChildQueueInfos("root").stream().map(QueueInfo::getQueueName)
          .collect(Collectors.toList()));
      assertEquals(List.of("a", "b"), yc.getRootQueueInfos().stream().map(QueueInfo::getQueueName)
          .collect(Collectors.toList()), "what `yarn top` sums up");
      QueueInfo b = yc.getQueueInfo("b");
      // Hadoop 3.3's QueueInfo has no path (io.dollymp.yarn.compat.LineApi): its clients show the name.
      assertEquals(LineApi.LINE.equals("3.3") ? "b" : "root.b", pathOrName(b));
      assertEquals(0.4f, b.getCapacity(), 1e-6);
      assertEquals(0.5f, b.getMaximumCapacity(), 1e-6);
      assertEquals(0.6f, yc.getQueueInfo("root.a").getCapacity(), 1e-6);
      assertNull(yc.getQueueInfo("nosuchqueue"), "`yarn queue -status nosuchqueue` finds no queue");
      return null;
    });
    List<QueueUserACLInfo> alice = as("alice", YarnClient::getQueueAclsInfo);
    QueueUserACLInfo onA = alice.stream().filter(i -> i.getQueueName().equals("root.a")).findFirst().orElseThrow();
    assertEquals(List.of(QueueACL.SUBMIT_APPLICATIONS), onA.getUserAcls(), "alice's rights on root.a");
    QueueUserACLInfo onB = alice.stream().filter(i -> i.getQueueName().equals("root.b")).findFirst().orElseThrow();
    assertEquals(List.of(), onB.getUserAcls(), "alice's rights on root.b");
  }

  @Test
  @Order(2)
  void submitAclsRefuseTheWrongUserAndAdmitTheRightOne() throws Exception {
    Exception refused = assertThrows(Exception.class, () -> as("bob", yc -> submit(yc, "a")));
    assertTrue(refused.getMessage().contains("User bob does not have permission to submit"), refused.getMessage());
    aliceApp = as("alice", yc -> submit(yc, "a"));
    aliceSecond = as("alice", yc -> submit(yc, "root.a"));
    assertEquals(YarnApplicationState.ACCEPTED, state(aliceApp));
    Exception unknown = assertThrows(Exception.class, () -> as("alice", yc -> submit(yc, "nosuchqueue")));
    assertTrue(unknown.getMessage().contains("unknown queue: nosuchqueue"), unknown.getMessage());
    Exception parent = assertThrows(Exception.class, () -> as("alice", yc -> submit(yc, "root")));
    assertTrue(parent.getMessage().contains("non-leaf queue: root"), parent.getMessage());
  }

  @Test
  @Order(3)
  void killAclsRefuseOtherUsersAndAdmitTheQueueAdministrator() throws Exception {
    Exception refused = assertThrows(Exception.class, () -> as("bob", yc -> {
      yc.killApplication(aliceApp);
      return null;
    }));
    assertTrue(refused.getMessage().contains("bob"), refused.getMessage());
    assertEquals(YarnApplicationState.ACCEPTED, state(aliceApp), "bob's kill had no effect");
    as("carol", yc -> {
      yc.killApplication(aliceSecond); // carol administers root.a
      return null;
    });
    long until = System.currentTimeMillis() + 20_000;
    while (state(aliceSecond) != YarnApplicationState.KILLED && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
    assertEquals(YarnApplicationState.KILLED, state(aliceSecond));
  }

  @Test
  @Order(4)
  void moveToQueueChecksTheTargetAndMovesTheApplication() throws Exception {
    Exception refused = assertThrows(Exception.class, () -> as("alice", yc -> {
      yc.moveApplicationAcrossQueues(aliceApp, "b"); // alice may not submit to b
      return null;
    }));
    assertTrue(refused.getMessage().contains("target queue"), refused.getMessage());
    String me = UserGroupInformation.getCurrentUser().getShortUserName();
    Exception unknown = assertThrows(Exception.class, () -> as(me, yc -> {
      yc.moveApplicationAcrossQueues(aliceApp, "nosuchqueue");
      return null;
    }));
    assertTrue(unknown.getMessage().contains("nosuchqueue"), unknown.getMessage());
    as(me, yc -> {
      yc.moveApplicationAcrossQueues(aliceApp, "b");
      return null;
    });
    assertEquals("root.b", as(me, yc -> yc.getApplicationReport(aliceApp).getQueue()));
    List<ApplicationAttemptId> inB = shim.getAppsInQueue("b");
    assertTrue(inB.stream().anyMatch(a -> a.getApplicationId().equals(aliceApp)), "apps in b: " + inB);
    assertFalse(shim.getAppsInQueue("a").stream().anyMatch(a -> a.getApplicationId().equals(aliceApp)));
    assertEquals(1, shim.queues().queue("b").getMetrics().getAppsPending()
        + shim.queues().queue("b").getMetrics().getAppsRunning(), "b's metrics count the moved application");
  }

  @Test
  @Order(5)
  void refreshQueuesRereadsCapacitiesAndTheShimsKeys() throws Exception {
    writeQueues(70, 30);
    writeYarnSite(0.25);
    cluster.getResourceManager().getRMContext().getRMAdminService().refreshQueues(RefreshQueuesRequest.newInstance());
    String me = UserGroupInformation.getCurrentUser().getShortUserName();
    assertEquals(0.3f, as(me, yc -> yc.getQueueInfo("b").getCapacity()), 1e-6);
    assertEquals(0.25, shim.shimConfig().amShareMax(), 1e-9, "yarn.scheduler.dollymp.am-share.max re-read");

    // An invalid file is refused naming the key, and nothing changes.
    writeQueues(70, 20);
    Exception bad = assertThrows(Exception.class,
        () -> cluster.getResourceManager().getRMContext().getRMAdminService().refreshQueues(RefreshQueuesRequest.newInstance()));
    assertTrue(String.valueOf(bad.getMessage()).contains(CS + "root.queues=a,b: the children's capacities sum to 90"),
        String.valueOf(bad.getMessage()));
    assertEquals(0.3f, as(me, yc -> yc.getQueueInfo("b").getCapacity()), 1e-6);

    // Removing b, which holds alice's moved application, is refused.
    write(STORE.resolve("capacity-scheduler.xml"), CS + "root.queues", "a", CS + "root.a.capacity", "100");
    Exception inUse = assertThrows(Exception.class,
        () -> cluster.getResourceManager().getRMContext().getRMAdminService().refreshQueues(RefreshQueuesRequest.newInstance()));
    assertTrue(String.valueOf(inUse.getMessage()).contains("queue root.b has 1 application(s)"),
        String.valueOf(inUse.getMessage()));
    List<String> names = new ArrayList<>();
    for (QueueInfo q : as(me, yc -> yc.getChildQueueInfos("root"))) {
      names.add(q.getQueueName());
    }
    assertEquals(List.of("a", "b"), names);
    assertEquals(SessionState.RUNNING, shim.sessionState(), "the session survived the refreshes");
  }
}
