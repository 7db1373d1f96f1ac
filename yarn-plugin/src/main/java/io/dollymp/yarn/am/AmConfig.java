package io.dollymp.yarn.am;

import io.dollymp.proto.v1.CloneCap;
import org.apache.hadoop.conf.Configuration;

/** Job-configuration keys of the ApplicationMaster helper (all optional). */
public final class AmConfig {
  public static final String PREFIX = "dollymp.am.";
  /** host:port of the decision service's AppMasterService; falls back to the shim's key. */
  public static final String SERVICE_ADDRESS = PREFIX + "service.address";
  public static final String SHIM_SERVICE_ADDRESS = "yarn.scheduler.dollymp.service.address";
  public static final String DEFAULT_SERVICE_ADDRESS = "127.0.0.1:50051";
  /** Deadline of each call to the service. */
  public static final String RPC_TIMEOUT_MS = PREFIX + "rpc.timeout-ms";
  public static final long DEFAULT_RPC_TIMEOUT_MS = 2000;
  /** How often the helper looks at the job's tasks. */
  public static final String POLL_MS = PREFIX + "poll-ms";
  public static final long DEFAULT_POLL_MS = 200;
  /** How often the helper asks for the plan when it has nothing to report (late tasks get clones). */
  public static final String PLAN_POLL_MS = PREFIX + "plan-poll-ms";
  public static final long DEFAULT_PLAN_POLL_MS = 1000;
  /**
   * A running attempt whose progress grew is reported again after this long, besides each tenth of
   * progress: the service's late-copy rule needs a copy's rate from two reports, and a straggler's
   * tenths come tens of seconds apart (Hadoop tasks send their status every 3 s by default).
   */
  public static final String PROGRESS_REPORT_MS = PREFIX + "progress-report-ms";
  public static final long DEFAULT_PROGRESS_REPORT_MS = 3000;
  /**
   * A task's clones are launched once one of its copies has reported progress (its JVM is up and at
   * work) or its first copy was launched this long ago; 0 (the default) launches them as soon as the plan
   * grants them. On nodes whose containers share few cores, clones starting beside their original make
   * every JVM start-up slower, the original's included.
   */
  public static final String CLONE_AFTER_START_MS = PREFIX + "clone.after-start-ms";
  public static final long DEFAULT_CLONE_AFTER_START_MS = 0;
  /** After a failed call, the helper waits this long before calling again (no clones meanwhile). */
  public static final String RETRY_MS = PREFIX + "retry-ms";
  public static final long DEFAULT_RETRY_MS = 2000;
  /** Directory (any Hadoop file system) where the AM writes its per-attempt record at the end. */
  public static final String RECORD_DIR = PREFIX + "record.dir";
  /**
   * Cap of clones per task, of this job (the service's answer is clamped to [0, this] and to {@link
   * #HARD_MAX_CLONES}).
   */
  public static final String MAX_CLONES = PREFIX + "max-clones";
  /**
   * At most this many clones of a task, three copies in all (DollyMP Sec. 4, Corollary 4.1): the wire
   * contract's one definition (proto/dollymp/v1/scheduler.proto, CloneCap.MAX_CLONES_PER_TASK), which the
   * service's clone plans read too.
   */
  public static final int HARD_MAX_CLONES = CloneCap.MAX_CLONES_PER_TASK_VALUE;
  /** Delay assignment on (the DollyMP AM and shuffle plugin honour ω from the service). */
  public static final String DELAY_ASSIGNMENT = PREFIX + "delay-assignment.enabled";
  /** Upper bound on ω the AM will honour, seconds. */
  public static final String MAX_OMEGA_S = PREFIX + "delay-assignment.max-wait-s";
  public static final double DEFAULT_MAX_OMEGA_S = 30.0;

  /**
   * PEM CA of the service's TLS certificate (falls back to the shim's key): set, the helper speaks TLS.
   * A client certificate for mutual TLS is the AM's own (never the shim's: it would let any AM act as
   * the shim).
   */
  public static final String TLS_CA_FILE = PREFIX + "tls.ca-file";
  public static final String SHIM_TLS_CA_FILE = "yarn.scheduler.dollymp.tls.ca-file";
  public static final String TLS_CERT_FILE = PREFIX + "tls.cert-file";
  public static final String TLS_KEY_FILE = PREFIX + "tls.key-file";

  private AmConfig() {}

  public static io.grpc.ChannelCredentials credentials(Configuration conf) throws java.io.IOException {
    String ca = conf.getTrimmed(TLS_CA_FILE, "");
    if (ca.isEmpty()) {
      ca = conf.getTrimmed(SHIM_TLS_CA_FILE, "");
    }
    String cert = conf.getTrimmed(TLS_CERT_FILE, "");
    String key = conf.getTrimmed(TLS_KEY_FILE, "");
    if (cert.isEmpty() != key.isEmpty()) {
      throw new IllegalArgumentException(TLS_CERT_FILE + " and " + TLS_KEY_FILE + " must be set together");
    }
    return io.dollymp.yarn.scheduler.client.ChannelSecurity.credentials(ca, cert, key);
  }

  public static String serviceAddress(Configuration conf) {
    String a = conf.getTrimmed(SERVICE_ADDRESS);
    if (a == null || a.isEmpty()) {
      a = conf.getTrimmed(SHIM_SERVICE_ADDRESS, DEFAULT_SERVICE_ADDRESS);
    }
    return a;
  }

  public static long positive(Configuration conf, String key, long dflt) {
    long v = conf.getLong(key, dflt);
    if (v <= 0) {
      throw new IllegalArgumentException(key + " must be > 0, got " + v);
    }
    return v;
  }

  public static long nonNegative(Configuration conf, String key, long dflt) {
    long v = conf.getLong(key, dflt);
    if (v < 0) {
      throw new IllegalArgumentException(key + " must be >= 0, got " + v);
    }
    return v;
  }

  public static int maxClones(Configuration conf) {
    int v = conf.getInt(MAX_CLONES, HARD_MAX_CLONES);
    if (v < 0) {
      throw new IllegalArgumentException(MAX_CLONES + " must be >= 0, got " + v);
    }
    return Math.min(v, HARD_MAX_CLONES);
  }
}
