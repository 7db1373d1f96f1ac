package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.AclClusters;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.UnmanagedAm;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.server.api.ResourceManagerAdministrationProtocol;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A hostile tenant against queue ACLs through a real RM with the shim and the real decision service
 * (issue 57 item 7), beside {@link QueuesAndAclsIT}: root -> prod (alice submits, carol administers) and
 * adhoc (mallory submits); the test's own user is the YARN admin. Alice's two applications in prod hold
 * containers the service placed. Mallory tries to submit to prod, to move alice's application and her own
 * into a queue not hers, to kill alice's application, to fail its attempt, to change its priority and to
 * refresh the queues; each is refused naming her, and afterwards alice's applications are RUNNING in prod at
 * their priority with their containers, and get new ones through the service, which never fell back.
 */
class HostileQueueAclsIT {
  private static final String NAME = "dollymp-hostile-acls";
  private static final Path WORK = Paths.get("target", "hostile-acls-it").toAbsolutePath();
  private static final String CS = "yarn.scheduler.capacity.";
  private static final Resource TASK = Resource.newInstance(256, 1);
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;

  @BeforeAll
  static void start() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(WORK.resolve("conf-store"));
    AclClusters.writeSite(WORK.resolve("conf-store").resolve("capacity-scheduler.xml"), CS + "root.queues",
        "prod,adhoc", CS + "root.acl_submit_applications", " ", CS + "root.acl_administer_queue", " ",
        CS + "root.prod.capacity", "60", CS + "root.prod.acl_submit_applications", "alice",
        CS + "root.prod.acl_administer_queue", "carol", CS + "root.adhoc.capacity", "40",
        CS + "root.adhoc.acl_submit_applications", "mallory");
    AclClusters.writeSite(WORK.resolve("conf-store").resolve("yarn-site.xml"));
    int grpcPort;
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    cluster = MiniClusters.startWithShim(NAME, 2, AclClusters.conf(grpcPort, WORK.resolve("conf-store")), 30_000);
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

  private static <T> T as(String user, AclClusters.Call<T> body) throws Exception {
    return AclClusters.as(user, body);
  }

  private static <T> T client(String user, AclClusters.ClientCall<T> body) throws Exception {
    return AclClusters.client(cluster.getConfig(), user, body);
  }

  private static ApplicationReport report(ApplicationId id) throws Exception {
    return client(UserGroupInformation.getCurrentUser().getShortUserName(), yc -> yc.getApplicationReport(id));
  }

  /** A refused call: its message names mallory (the RM's AccessControlException says who was refused). */
  private static void refused(String what, AclClusters.Call<?> call) {
    Exception e = assertThrows(Exception.class, call::run, what + " was not refused");
    String text = String.valueOf(e.getMessage());
    for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
      text += " | " + c.getMessage();
    }
    assertTrue(text.contains("mallory"), what + ": " + text);
  }

  @Test
  void malloryIsRefusedEveryQueueAclAndAlicesApplicationsAreUnaffected() throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    UnmanagedAm alice = as("alice", () -> UnmanagedAm.start(conf, "alice-etl", "prod", 60_000));
    UnmanagedAm aliceSecond = as("alice", () -> UnmanagedAm.start(conf, "alice-report", "prod", 60_000));
    UnmanagedAm mallory = as("mallory", () -> UnmanagedAm.start(conf, "mallory-job", "adhoc", 60_000));
    try {
      alice.request(2, TASK);
      aliceSecond.request(1, TASK);
      List<Container> held = new ArrayList<>(alice.await(2, 30_000));
      held.addAll(aliceSecond.await(1, 30_000));
      assertEquals(3, held.size(), "alice's containers before the attacks:\n" + service.logText());
      long fallbackBefore = shim.fallbackContainers();
      Map<ApplicationId, Integer> priorities = new LinkedHashMap<>();
      for (UnmanagedAm am : List.of(alice, aliceSecond)) {
        priorities.put(am.appId, report(am.appId).getPriority().getPriority());
      }

      // submit: prod by either name, and root (a parent queue)
      for (String queue : List.of("prod", "root.prod")) {
        refused("mallory submits to " + queue, () -> client("mallory", yc -> {
          ApplicationSubmissionContext ctx = yc.createApplication().getApplicationSubmissionContext();
          ctx.setApplicationName("mallory-in-" + queue);
          ctx.setQueue(queue);
          ctx.setUnmanagedAM(true);
          ctx.setResource(Resource.newInstance(256, 1));
          ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
          yc.submitApplication(ctx);
          return null;
        }));
      }
      // move: alice's application to adhoc (not mallory's to move), mallory's own into prod (not hers to submit)
      refused("mallory moves alice's application", () -> client("mallory", yc -> {
        yc.moveApplicationAcrossQueues(alice.appId, "adhoc");
        return null;
      }));
      refused("mallory moves her own application into prod", () -> client("mallory", yc -> {
        yc.moveApplicationAcrossQueues(mallory.appId, "prod");
        return null;
      }));
      // kill: alice's application, its attempt
      refused("mallory kills alice's application", () -> client("mallory", yc -> {
        yc.killApplication(alice.appId);
        return null;
      }));
      refused("mallory fails alice's attempt", () -> client("mallory", yc -> {
        yc.failApplicationAttempt(report(aliceSecond.appId).getCurrentApplicationAttemptId());
        return null;
      }));
      // administer: alice's priority, the queues
      refused("mallory raises alice's priority", () -> client("mallory", yc -> {
        yc.updateApplicationPriority(alice.appId, Priority.newInstance(9));
        return null;
      }));
      refused("mallory refreshes the queues", () -> as("mallory", () -> {
        ResourceManagerAdministrationProtocol admin =
            ClientRMProxy.createRMProxy(new Configuration(cluster.getConfig()), ResourceManagerAdministrationProtocol.class);
        admin.refreshQueues(RefreshQueuesRequest.newInstance());
        return null;
      }));

      // Alice's applications: RUNNING in prod, at their priority, their containers kept, new ones placed.
      for (UnmanagedAm am : List.of(alice, aliceSecond)) {
        ApplicationReport r = report(am.appId);
        assertEquals(YarnApplicationState.RUNNING, r.getYarnApplicationState(), am.appId + " " + r.getDiagnostics());
        assertEquals("prod", r.getQueue().replace("root.", ""), am.appId + " moved");
        assertEquals(priorities.get(am.appId), r.getPriority().getPriority(), am.appId + " priority");
        assertEquals(List.of(), am.heartbeatCompleted(), am.appId + ": a container of it completed");
      }
      assertEquals(YarnApplicationState.RUNNING, report(mallory.appId).getYarnApplicationState());
      assertEquals("adhoc", report(mallory.appId).getQueue().replace("root.", ""));
      alice.request(1, TASK);
      assertEquals(1, alice.await(1, 30_000).size(), "alice's next container after the attacks");
      assertEquals(SessionState.RUNNING, shim.sessionState(), "the shim's session after the attacks");
      assertEquals(fallbackBefore, shim.fallbackContainers(), "containers the fallback policy granted meanwhile");
      List<ApplicationId> inProd = new ArrayList<>();
      shim.getAppsInQueue("prod").forEach(a -> inProd.add(a.getApplicationId()));
      assertTrue(inProd.contains(alice.appId) && inProd.contains(aliceSecond.appId), "apps in prod: " + inProd);
    } finally {
      for (UnmanagedAm am : List.of(mallory, aliceSecond, alice)) {
        try {
          as(am == mallory ? "mallory" : "alice", () -> {
            am.close();
            return null;
          });
        } catch (Exception e) {
          // the cluster is stopped next; an application left running does not outlive it
        }
      }
    }
  }
}
