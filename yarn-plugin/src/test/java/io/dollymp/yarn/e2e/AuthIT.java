package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.AppMasterServiceGrpc;
import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.AttemptReports;
import io.dollymp.proto.v1.AttemptState;
import io.dollymp.proto.v1.RegisterRequest;
import io.dollymp.proto.v1.SchedulerServiceGrpc;
import io.dollymp.yarn.am.AmConfig;
import io.dollymp.yarn.am.CloningSpeculator;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimAppAttempt;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.ChannelSecurity;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.AttemptRecords;
import io.dollymp.yarn.testkit.AttemptRecords.Row;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.TestCerts;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Authenticated callers end to end: the real Python service with a shared secret and TLS, a mini YARN
 * cluster whose shim presents the secret over TLS, and real MapReduce jobs whose AM helpers present their
 * AMRMToken digests. A stranger's Register and forged AM reports for a job's containers are refused and
 * kill nothing; after a service restart the AM helper sends its job again and cloning goes on.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AuthIT {
  private static final Path WORK = Paths.get("target", "auth-it").toAbsolutePath();
  private static final String SECRET = "auth-it-shared-secret-0123456789";
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static TestCerts certs;
  private static List<String> serveArgs;
  private static int port;

  @BeforeAll
  static void startCluster() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(WORK);
    certs = TestCerts.make(WORK.resolve("pki"));
    Path secret = Files.writeString(WORK.resolve("shim.secret"), SECRET + "\n");
    serveArgs = List.of("--auth-secret-file", secret.toString(), "--tls-cert", certs.serverCert.toString(),
        "--tls-key", certs.serverKey.toString());
    service = startService(0);
    port = service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(port);
    conf.set(ShimConfig.AUTH_SECRET_FILE, secret.toString());
    conf.set(ShimConfig.TLS_CA_FILE, certs.ca.toString()); // the AM helper falls back to this key too
    cluster = MiniClusters.startWithShim("dollymp-auth", 3, conf, 30_000);
    assertEquals(SessionState.RUNNING, shim().sessionState(), "shim never reached RUNNING:\n" + service.logText());
  }

  private static DecisionServiceProcess startService(int grpcPort) throws Exception {
    // No clone yields: any container killed here would be the forger's doing.
    return new DecisionServiceProcess(WORK.resolve("service"), "dollymp-ext", grpcPort,
        Map.of("DOLLYMP_APPMASTER_CLONE_YIELD", "false",
            "DOLLYMP_POLICY_OPTIONS", "{\"clone_rule\": \"none\", \"sigma_factor\": 1}"), serveArgs);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
    if (service != null) {
      service.close();
    }
  }

  private static DollyMPScheduler shim() {
    return (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  private static Configuration jobConf() {
    Configuration conf = new Configuration(cluster.getConfig());
    conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, true);
    conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, true);
    conf.set(MRJobConfig.MR_AM_JOB_SPECULATOR, CloningSpeculator.class.getName());
    conf.set(AmConfig.SERVICE_ADDRESS, "127.0.0.1:" + port);
    conf.set(AmConfig.RECORD_DIR, WORK.resolve("records").toUri().toString());
    return conf;
  }

  /** Hadoop's SleepJob with the AM helper on (SleepJob turns speculation, and so the helper, off). */
  private static Job sleepJob(String name, long mapMs) throws Exception {
    Job job = ExampleJobs.sleep(jobConf(), name, 3, 1, mapMs, 500);
    job.getConfiguration().setBoolean(MRJobConfig.MAP_SPECULATIVE, true);
    job.getConfiguration().setBoolean(MRJobConfig.REDUCE_SPECULATIVE, true);
    return job;
  }

  private static ManagedChannel tlsChannel() throws Exception {
    return Grpc.newChannelBuilder("127.0.0.1:" + port, ChannelSecurity.credentials(certs.ca.toString(), "", ""))
        .build();
  }

  private static List<String> liveTaskContainers(String appId) {
    List<String> out = new ArrayList<>();
    SchedulerApplication<ShimAppAttempt> app = shim().getSchedulerApplications().get(ApplicationId.fromString(appId));
    if (app != null && app.getCurrentAppAttempt() != null) {
      for (RMContainer c : app.getCurrentAppAttempt().getLiveContainers()) {
        if (!c.isAMContainer()) {
          out.add(c.getContainerId().toString());
        }
      }
    }
    return out;
  }

  @Test
  @Order(1)
  void strangersAreRefusedAndTheJobClonesUnharmed() throws Exception {
    Job job = sleepJob("dollymp-auth-sleep", 8000);
    ExampleJobs.submitAndAwaitMaps(job, 120_000);
    String appId = ExampleJobs.appIdOf(job);
    List<String> victims = liveTaskContainers(appId);
    assertTrue(!victims.isEmpty(), "no running task container of " + appId);
    ManagedChannel ch = tlsChannel();
    try {
      // A client without the secret cannot register as the cluster's RM (and so cannot push it into fallback).
      String rmId = ShimConfig.from(cluster.getConfig()).rmId();
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> SchedulerServiceGrpc
          .newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
          .register(RegisterRequest.newBuilder().setRmId(rmId).setTickMs(100).build()));
      assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
      // Forged AM reports naming the job's running containers as beaten clones: without the job's AMRMToken
      // (none, or a made-up digest) they are refused.
      AttemptReports.Builder forged = AttemptReports.newBuilder().setApplicationId(appId);
      for (int i = 0; i < victims.size(); i++) {
        forged.addAttempts(AttemptReport.newBuilder().setTaskId("task_" + appId.substring(12) + "_m_00000" + i)
            .setAttemptId("attempt_" + appId.substring(12) + "_m_00000" + i + "_9").setPhaseId("map")
            .setContainerId(victims.get(i)).setIsClone(true).setState(AttemptState.ATTEMPT_RUNNING)
            .setProgress(0.01).setTimeMs(System.currentTimeMillis()));
      }
      for (String digest : List.of("", "00".repeat(32))) {
        AppMasterServiceGrpc.AppMasterServiceBlockingStub am =
            AppMasterServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
        if (!digest.isEmpty()) {
          am = am.withInterceptors(ChannelSecurity.header(ChannelSecurity.AM_TOKEN_HEADER, digest));
        }
        AppMasterServiceGrpc.AppMasterServiceBlockingStub stub = am;
        e = assertThrows(StatusRuntimeException.class, () -> stub.reportAttempts(forged.build()));
        assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), e.getStatus().toString());
      }
    } finally {
      ch.shutdownNow();
    }
    assertEquals(SessionState.RUNNING, shim().sessionState(), "the stranger disturbed the shim's session");
    assertTrue(job.waitForCompletion(false), "the job failed");
    assertEquals(0, shim().containersPreempted(), "a container was killed");
    Map<String, List<Row>> rows = AttemptRecords.awaitFinal(WORK.resolve("records").resolve(appId + ".tsv"), 60_000);
    assertTrue(rows.values().stream().flatMap(List::stream).anyMatch(Row::isClone),
        "the legitimate AM got no clone (its token was not accepted?):\n" + rows + "\n" + service.logText());
  }

  @Test
  @Order(2)
  void afterAServiceRestartTheAmSendsItsJobAgain() throws Exception {
    // Maps long enough that the job outlives the restart: the AM resends its job once the restarted service
    // answers it (its gRPC channel reconnects with backoff), and with 15 s maps on a loaded machine the job
    // sometimes finished first, which this test would read as the AM never resending.
    Job job = sleepJob("dollymp-auth-restart", 45_000);
    ExampleJobs.submitAndAwaitMaps(job, 120_000);
    String appId = ExampleJobs.appIdOf(job);
    service.killHard();
    service = startService(port);
    service.awaitGrpcPort(60_000);
    long deadline = System.currentTimeMillis() + 60_000;
    String profile = "ReportJobProfile " + appId;
    while (!service.logText().contains(profile) && System.currentTimeMillis() < deadline && !job.isComplete()) {
      Thread.sleep(200);
    }
    assertTrue(service.logText().contains(profile),
        "the AM never sent its job to the restarted service:\n" + service.logText());
    assertTrue(job.waitForCompletion(false), "the job failed across the restart");
  }
}
