package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

/**
 * An ApplicationMaster driven from the test through YARN's own client libraries: an unmanaged-AM
 * application submitted with {@link YarnClient} (no AM container), registered and heartbeating with
 * {@link AMRMClient} over the RM's real ApplicationMasterProtocol with the application's AMRM token.
 * Containers it gets are never launched; {@link #close} releases them and unregisters.
 */
public final class UnmanagedAm implements AutoCloseable {
  public final ApplicationId appId;
  public final RegisterApplicationMasterResponse registration;
  private final YarnClient yarn;
  private final UserGroupInformation ugi;
  private final AMRMClient<ContainerRequest> amrm;
  private final List<Container> held = new ArrayList<>();

  private UnmanagedAm(ApplicationId appId, YarnClient yarn, UserGroupInformation ugi,
      AMRMClient<ContainerRequest> amrm, RegisterApplicationMasterResponse registration) {
    this.appId = appId;
    this.yarn = yarn;
    this.ugi = ugi;
    this.amrm = amrm;
    this.registration = registration;
  }

  /** Submits an unmanaged-AM application to {@code queue}, waits until its attempt is launched, registers. */
  public static UnmanagedAm start(Configuration conf, String name, String queue, long timeoutMs) throws Exception {
    return start(conf, name, queue, 0, timeoutMs);
  }

  /** As above, submitted with YARN application priority {@code priority}. */
  public static UnmanagedAm start(Configuration conf, String name, String queue, int priority, long timeoutMs)
      throws Exception {
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    YarnClientApplication app = yarn.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ApplicationId appId = ctx.getApplicationId();
    ctx.setApplicationName(name);
    ctx.setQueue(queue);
    ctx.setUnmanagedAM(true);
    ctx.setPriority(Priority.newInstance(priority));
    ctx.setResource(Resource.newInstance(256, 1));
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    yarn.submitApplication(ctx);
    long deadline = System.currentTimeMillis() + timeoutMs;
    ApplicationAttemptId attempt = null;
    while (System.currentTimeMillis() < deadline) {
      ApplicationReport report = yarn.getApplicationReport(appId);
      if (report.getYarnApplicationState() == YarnApplicationState.ACCEPTED
          && report.getCurrentApplicationAttemptId() != null
          && yarn.getApplicationAttemptReport(report.getCurrentApplicationAttemptId()).getYarnApplicationAttemptState()
              == YarnApplicationAttemptState.LAUNCHED) {
        attempt = report.getCurrentApplicationAttemptId();
        break;
      }
      Thread.sleep(100);
    }
    if (attempt == null) {
      yarn.stop();
      throw new IllegalStateException("unmanaged AM attempt of " + appId + " was not launched in time");
    }
    Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(appId);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
    ugi.addToken(token);
    AMRMClient<ContainerRequest> amrm = AMRMClient.createAMRMClient();
    PrivilegedExceptionAction<RegisterApplicationMasterResponse> register = () -> {
      amrm.init(conf);
      amrm.start();
      return amrm.registerApplicationMaster("localhost", 0, "");
    };
    RegisterApplicationMasterResponse reg = ugi.doAs(register);
    return new UnmanagedAm(appId, yarn, ugi, amrm, reg);
  }

  /** Adds {@code places} (node or rack names) to the application's blacklist on the next heartbeat. */
  public void blacklist(List<String> places) {
    amrm.updateBlacklist(new ArrayList<>(places), new ArrayList<>());
  }

  /** Asks for {@code n} containers of {@code capability} anywhere (priority 1). */
  public void request(int n, Resource capability) {
    for (int i = 0; i < n; i++) {
      amrm.addContainerRequest(new ContainerRequest(capability, null, null, Priority.newInstance(1)));
    }
  }

  /** Withdraws {@code n} outstanding anywhere-requests of {@code capability} (priority 1). */
  public void cancel(int n, Resource capability) {
    for (int i = 0; i < n; i++) {
      amrm.removeContainerRequest(new ContainerRequest(capability, null, null, Priority.newInstance(1)));
    }
  }

  /** Asks for {@code n} containers only on {@code nodeName} (relaxLocality=false; priority 2). */
  public void requestOnlyOn(int n, Resource capability, String nodeName) {
    for (int i = 0; i < n; i++) {
      amrm.addContainerRequest(new ContainerRequest(capability, new String[] {nodeName}, null,
          Priority.newInstance(2), false));
    }
  }

  /** Sends {@code requests} (placement-constraint scheduling requests) with the next heartbeat, which this makes. */
  public AllocateResponse sendSchedulingRequests(List<SchedulingRequest> requests) throws Exception {
    amrm.addSchedulingRequests(requests);
    return ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () -> amrm.allocate(0.1f));
  }

  /** Heartbeats until {@code want} new containers arrived or {@code timeoutMs} passed; returns those that came. */
  public List<Container> await(int want, long timeoutMs) throws Exception {
    List<Container> got = new ArrayList<>();
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (got.size() < want && System.currentTimeMillis() < deadline) {
      AllocateResponse r = ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () -> amrm.allocate(0.1f));
      for (Container c : r.getAllocatedContainers()) {
        got.add(c);
        held.add(c);
        amrm.removeContainerRequest(new ContainerRequest(c.getResource(), null, null, c.getPriority()));
      }
      Thread.sleep(200);
    }
    return got;
  }

  /** One heartbeat: the statuses of this application's containers that completed since the last one. */
  public List<ContainerStatus> heartbeatCompleted() throws Exception {
    AllocateResponse r = ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () -> amrm.allocate(0.1f));
    return r.getCompletedContainersStatuses();
  }

  /** Releases every container received so far (sent on the next heartbeat, which this makes). */
  public void releaseAll() throws Exception {
    for (Container c : held) {
      amrm.releaseAssignedContainer(c.getId());
    }
    held.clear();
    ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () -> amrm.allocate(0.5f));
  }

  public YarnClient yarnClient() {
    return yarn;
  }

  @Override
  public void close() throws IOException {
    try {
      releaseAll();
      ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
        amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
        return null;
      });
    } catch (Exception e) {
      throw new IOException("unregistering " + appId, e);
    } finally {
      amrm.stop();
      yarn.stop();
    }
  }
}
