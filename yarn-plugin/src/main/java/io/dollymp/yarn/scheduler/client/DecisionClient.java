package io.dollymp.yarn.scheduler.client;

import io.dollymp.proto.v1.BatchStatus;
import io.dollymp.proto.v1.Plan;
import io.dollymp.proto.v1.RegisterRequest;
import io.dollymp.proto.v1.RegisterResponse;
import io.dollymp.proto.v1.SchedulerServiceGrpc;
import io.dollymp.proto.v1.StateBatch;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background thread that talks to the decision service: registers, sends one StateBatch per
 * tick on a long-lived Sync stream, and hands plans to the {@link ClusterView}. The RM's event
 * thread never calls into this class except to read the session state.
 */
public final class DecisionClient implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(DecisionClient.class);

  /** Settings the client needs (a subset of the shim's configuration). */
  public static final class Settings {
    private final String host;
    private final int port;
    private final String rmId;
    private final String shimVersion;
    private final long tickMs;
    private final long planMaxAgeMs;
    private final long rpcTimeoutMs;
    private final long reconnectBackoffMs;
    private final ChannelCredentials credentials;
    private final String secret;

    public Settings(String host, int port, String rmId, String shimVersion, long tickMs, long planMaxAgeMs,
        long rpcTimeoutMs, long reconnectBackoffMs, ChannelCredentials credentials, String secret) {
      this.host = host;
      this.port = port;
      this.rmId = rmId;
      this.shimVersion = shimVersion;
      this.tickMs = tickMs;
      this.planMaxAgeMs = planMaxAgeMs;
      this.rpcTimeoutMs = rpcTimeoutMs;
      this.reconnectBackoffMs = reconnectBackoffMs;
      this.credentials = credentials;
      this.secret = secret;
    }

    /** Plaintext, no secret (tests and loopback). */
    public Settings(String host, int port, String rmId, String shimVersion, long tickMs, long planMaxAgeMs,
        long rpcTimeoutMs, long reconnectBackoffMs) {
      this(host, port, rmId, shimVersion, tickMs, planMaxAgeMs, rpcTimeoutMs, reconnectBackoffMs,
          InsecureChannelCredentials.create(), "");
    }

    public String host() {
      return host;
    }

    public int port() {
      return port;
    }

    public String rmId() {
      return rmId;
    }

    public String shimVersion() {
      return shimVersion;
    }

    public long tickMs() {
      return tickMs;
    }

    public long planMaxAgeMs() {
      return planMaxAgeMs;
    }

    public long rpcTimeoutMs() {
      return rpcTimeoutMs;
    }

    public long reconnectBackoffMs() {
      return reconnectBackoffMs;
    }

    public ChannelCredentials credentials() {
      return credentials;
    }

    public String secret() {
      return secret;
    }
  }

  private final Settings settings;
  private final ClusterView view;
  private final SessionStateMachine session;
  private final LongSupplier clockMs;
  private final AtomicReference<Throwable> streamFailure = new AtomicReference<>();
  private final AtomicLong lastPlanMs = new AtomicLong();
  private final AtomicLong plansReceived = new AtomicLong();
  private final AtomicLong batchesSent = new AtomicLong();
  private volatile boolean running = true;
  private volatile Thread thread;
  private ManagedChannel channel;
  private ClientCallStreamObserver<StateBatch> requestStream;
  private String sessionId = "";
  private long seq;

  public DecisionClient(Settings settings, ClusterView view, SessionStateMachine session, LongSupplier clockMs) {
    this.settings = settings;
    this.view = view;
    this.session = session;
    this.clockMs = clockMs;
  }

  public void start() {
    Thread t = new Thread(this, "dollymp-decision-client");
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  public void stop() {
    running = false;
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    closeStream();
    if (channel != null) {
      channel.shutdownNow();
    }
  }

  public long plansReceived() {
    return plansReceived.get();
  }

  public long batchesSent() {
    return batchesSent.get();
  }

  @Override
  public void run() {
    ManagedChannelBuilder<?> builder = Grpc.newChannelBuilderForAddress(settings.host(), settings.port(),
        settings.credentials()).keepAliveTime(30, TimeUnit.SECONDS);
    if (!settings.secret().isEmpty()) {
      builder.intercept(ChannelSecurity.header(ChannelSecurity.SECRET_HEADER, settings.secret()));
    }
    channel = builder.build();
    while (running) {
      try {
        step();
        Thread.sleep(session.state() == SessionState.FALLBACK ? settings.reconnectBackoffMs() : settings.tickMs());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException e) {
        // Never let the client thread die: log, drop the session, retry after the backoff.
        LOG.warn("DollyMP client step failed: {}", e.toString());
        failSession(SessionEvent.STREAM_ERROR);
      }
    }
  }

  private void step() {
    switch (session.state()) {
      case NEW:
      case FALLBACK:
        register();
        break;
      case REGISTERED:
        openStreamAndResync();
        break;
      case RECOVERING:
      case RUNNING:
        tick();
        break;
      default:
        throw new IllegalStateException("unknown state " + session.state());
    }
  }

  private void register() {
    if (session.state() == SessionState.FALLBACK) {
      // After a crash the channel backs off exponentially (up to minutes); our own backoff governs.
      channel.resetConnectBackoff();
    }
    try {
      RegisterResponse resp = SchedulerServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(settings.rpcTimeoutMs(), TimeUnit.MILLISECONDS)
          .register(RegisterRequest.newBuilder()
              .setRmId(settings.rmId())
              .setShimVersion(settings.shimVersion())
              .setTickMs((int) settings.tickMs())
              .build());
      sessionId = resp.getSessionId();
      seq = 0;
      LOG.info("DollyMP registered with the decision service at {}:{} (session {}, policy {})",
          settings.host(), settings.port(), sessionId, resp.getPolicy());
      session.fire(SessionEvent.REGISTER_OK);
    } catch (RuntimeException e) {
      if (session.state() == SessionState.NEW) {
        LOG.warn("DollyMP decision service {}:{} unreachable: {}", settings.host(), settings.port(), e.toString());
      } else {
        LOG.debug("DollyMP decision service still unreachable: {}", e.toString());
      }
      session.fire(SessionEvent.REGISTER_FAILED);
    }
  }

  private void openStreamAndResync() {
    streamFailure.set(null);
    view.sessionLost();
    requestStream = null;
    SchedulerServiceGrpc.newStub(channel).sync(new ClientResponseObserver<StateBatch, Plan>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<StateBatch> stream) {
        requestStream = stream;
      }

      @Override
      public void onNext(Plan plan) {
        onPlan(plan);
      }

      @Override
      public void onError(Throwable t) {
        streamFailure.compareAndSet(null, t);
      }

      @Override
      public void onCompleted() {
        streamFailure.compareAndSet(null, new IllegalStateException("service closed the stream"));
      }
    });
    lastPlanMs.set(clockMs.getAsLong());
    send(true);
    session.fire(SessionEvent.RESYNC_SENT);
  }

  private void onPlan(Plan plan) {
    if (plan.getStatus() == BatchStatus.BATCH_RESYNC_REQUIRED) {
      streamFailure.compareAndSet(null, new IllegalStateException("service requires a resync: " + plan.getDetail()));
      return;
    }
    lastPlanMs.set(clockMs.getAsLong());
    plansReceived.incrementAndGet();
    view.acceptPlan(plan);
    SessionState s = session.state();
    if (s == SessionState.RECOVERING || s == SessionState.RUNNING) {
      session.fire(SessionEvent.PLAN_ACCEPTED);
    }
  }

  private void tick() {
    Throwable failure = streamFailure.get();
    if (failure != null) {
      LOG.warn("DollyMP stream to the decision service failed: {}", failure.toString());
      failSession(failure.getMessage() != null && failure.getMessage().contains("resync")
          ? SessionEvent.RESYNC_REQUIRED : SessionEvent.STREAM_ERROR);
      return;
    }
    if (clockMs.getAsLong() - lastPlanMs.get() > settings.planMaxAgeMs()) {
      LOG.warn("DollyMP plan older than {} ms: falling back", settings.planMaxAgeMs());
      failSession(SessionEvent.PLAN_STALE);
      return;
    }
    ClientCallStreamObserver<StateBatch> stream = requestStream;
    if (stream != null && stream.isReady()) {
      send(false);
    }
  }

  private void send(boolean full) {
    StateBatch.Builder batch = StateBatch.newBuilder()
        .setSessionId(sessionId)
        .setSeq(++seq)
        .setFullResync(full)
        .setRmTimeMs(clockMs.getAsLong());
    view.fillBatch(batch, full);
    requestStream.onNext(batch.build());
    batchesSent.incrementAndGet();
  }

  private void failSession(SessionEvent event) {
    closeStream();
    view.sessionLost();
    SessionState s = session.state();
    if (s != SessionState.NEW) {
      session.fire(event);
    } else {
      session.fire(SessionEvent.REGISTER_FAILED);
    }
  }

  private void closeStream() {
    ClientCallStreamObserver<StateBatch> stream = requestStream;
    requestStream = null;
    if (stream != null) {
      try {
        stream.cancel("session reset", null);
      } catch (RuntimeException e) {
        LOG.debug("cancel failed: {}", e.toString());
      }
    }
  }
}
