package io.dollymp.yarn.am;

import io.dollymp.proto.v1.AppMasterServiceGrpc;
import io.dollymp.proto.v1.AttemptReports;
import io.dollymp.proto.v1.ClonePlan;
import io.dollymp.proto.v1.ClonePlanRequest;
import io.dollymp.proto.v1.JobProfile;
import io.dollymp.yarn.scheduler.client.ChannelSecurity;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AM's calls to the decision service: blocking, each with a short deadline. Only the helper's own
 * thread calls these, never the AM's dispatcher. A failed call yields an empty answer and starts a
 * back-off window during which no call is made (the job then simply runs without clones).
 */
public final class AmServiceClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AmServiceClient.class);
  private final String target;
  private final long timeoutMs;
  private final long retryMs;
  private final ChannelCredentials credentials;
  private final Supplier<String> tokenDigest;
  private ManagedChannel channel;
  private long quietUntil;
  private int failures;
  private int successes;
  private boolean unknownApplication;

  public AmServiceClient(String target, long timeoutMs, long retryMs) {
    this(target, timeoutMs, retryMs, InsecureChannelCredentials.create(), () -> "");
  }

  /**
   * {@code tokenDigest}: the hex SHA-256 of the AM's AMRMToken, read on each call and presented as
   * {@link ChannelSecurity#AM_TOKEN_HEADER} ("" presents none).
   */
  public AmServiceClient(String target, long timeoutMs, long retryMs, ChannelCredentials credentials,
      Supplier<String> tokenDigest) {
    this.target = target;
    this.timeoutMs = timeoutMs;
    this.retryMs = retryMs;
    this.credentials = credentials;
    this.tokenDigest = tokenDigest;
  }

  private AppMasterServiceGrpc.AppMasterServiceBlockingStub stub() {
    if (channel == null) {
      channel = Grpc.newChannelBuilder(target, credentials).build();
    }
    AppMasterServiceGrpc.AppMasterServiceBlockingStub stub =
        AppMasterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
    String digest = tokenDigest.get();
    return digest.isEmpty() ? stub : stub.withInterceptors(ChannelSecurity.header(ChannelSecurity.AM_TOKEN_HEADER,
        digest));
  }

  /**
   * True once after a call the service answered that it does not know the application (it restarted,
   * or forgot the job): the caller sends the profile and every attempt again.
   */
  public boolean takeUnknownApplication() {
    boolean u = unknownApplication;
    unknownApplication = false;
    return u;
  }

  /** True while a recent failure keeps the client quiet. */
  public boolean backingOff(long now) {
    return now < quietUntil;
  }

  public Optional<ClonePlan> reportJobProfile(JobProfile p) {
    return call("ReportJobProfile", () -> stub().reportJobProfile(p));
  }

  public Optional<ClonePlan> reportAttempts(AttemptReports r) {
    return call("ReportAttempts", () -> stub().reportAttempts(r));
  }

  public Optional<ClonePlan> getClonePlan(String applicationId) {
    return call("GetClonePlan",
        () -> stub().getClonePlan(ClonePlanRequest.newBuilder().setApplicationId(applicationId).build()));
  }

  private Optional<ClonePlan> call(String what, Supplier<ClonePlan> rpc) {
    long now = System.currentTimeMillis();
    if (backingOff(now)) {
      return Optional.empty();
    }
    try {
      ClonePlan plan = rpc.get();
      successes++;
      return Optional.of(plan);
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.NOT_FOUND || code == Status.Code.FAILED_PRECONDITION) {
        // "no job profile for ...": the service lost the job; no back-off, the caller re-sends it
        unknownApplication = true;
        LOG.info("DollyMP AM helper: the service does not know this job ({}); sending its profile again",
            e.getStatus().getDescription());
        return Optional.empty();
      }
      failures++;
      quietUntil = System.currentTimeMillis() + retryMs;
      LOG.warn("DollyMP AM helper: {} to {} failed ({}); no clones for the next {} ms", what, target,
          e.getStatus(), retryMs);
      return Optional.empty();
    }
  }

  public int failures() {
    return failures;
  }

  public int successes() {
    return successes;
  }

  @Override
  public void close() {
    if (channel != null) {
      channel.shutdownNow();
      try {
        channel.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
