package io.dollymp.yarn.scheduler;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;

/**
 * Every {@code yarn-site.xml} key the shim reads, all under {@value #PREFIX}, validated once at
 * start-up. An invalid value stops the ResourceManager with a message naming the key.
 */
public final class ShimConfig {
  public static final String PREFIX = "yarn.scheduler.dollymp.";

  /** host:port of the decision service's gRPC endpoint. */
  public static final String SERVICE_ADDRESS = PREFIX + "service.address";
  public static final String DEFAULT_SERVICE_ADDRESS = "127.0.0.1:50051";
  /** Batching interval: one StateBatch per tick. */
  public static final String TICK_MS = PREFIX + "tick-ms";
  public static final long DEFAULT_TICK_MS = 100;
  /** Proposals older than this are dropped (stale) and, with no fresher plan, fallback takes over. */
  public static final String PLAN_MAX_AGE_MS = PREFIX + "plan.max-age-ms";
  public static final long DEFAULT_PLAN_MAX_AGE_MS = 3000;
  /**
   * When the shim commits the service's proposals: "plan" (default) as soon as a plan arrives, on a thread of
   * its own under the scheduler's lock, as CapacityScheduler's asynchronous scheduling allocates without
   * waiting for a heartbeat; "heartbeat" on the proposed node's next heartbeat only. Under "plan" a heartbeat
   * still commits what is left for its node.
   */
  public static final String COMMIT = PREFIX + "commit";
  public static final String DEFAULT_COMMIT = "plan";
  /** Deadline of unary calls (Register) to the service. */
  public static final String RPC_TIMEOUT_MS = PREFIX + "rpc.timeout-ms";
  public static final long DEFAULT_RPC_TIMEOUT_MS = 2000;
  /** Wait between reconnection attempts while the service is unreachable. */
  public static final String RECONNECT_BACKOFF_MS = PREFIX + "reconnect.backoff-ms";
  public static final long DEFAULT_RECONNECT_BACKOFF_MS = 1000;
  /** Built-in fallback policy when the service is unreachable: "fifo" or "none". */
  public static final String FALLBACK_POLICY = PREFIX + "fallback.policy";
  public static final String DEFAULT_FALLBACK_POLICY = "fifo";
  /** How long the service may be unreachable (or its plan stale) before fallback starts. */
  public static final String FALLBACK_AFTER_MS = PREFIX + "fallback.after-ms";
  public static final long DEFAULT_FALLBACK_AFTER_MS = 500;
  /** Largest dominant share of the cluster that ApplicationMaster containers may hold together. */
  public static final String AM_SHARE_MAX = PREFIX + "am-share.max";
  public static final double DEFAULT_AM_SHARE_MAX = 0.5;
  /** Stable identity of this RM towards the service (defaults to the cluster id). */
  public static final String RM_ID = PREFIX + "rm-id";
  /** The decision service's HTTP address (e.g. http://svc:8080): diagnostics and the RM page link to its /ui/. */
  public static final String UI_ADDRESS = PREFIX + "ui.address";
  static final int MAX_UI_ADDRESS = 512;

  /** File holding the shared secret the shim presents to the service (its grpc.auth_secret_file). */
  public static final String AUTH_SECRET_FILE = PREFIX + "auth.secret-file";
  /** PEM CA that signed the service's certificate: set, the shim speaks TLS to the service. */
  public static final String TLS_CA_FILE = PREFIX + "tls.ca-file";
  /** PEM client certificate and its PKCS#8 key, for mutual TLS (the service's grpc.tls_client_ca). */
  public static final String TLS_CERT_FILE = PREFIX + "tls.cert-file";
  public static final String TLS_KEY_FILE = PREFIX + "tls.key-file";
  /**
   * A Kerberos-secured RM ({@code hadoop.security.authentication} other than simple) refuses to start
   * without {@link #AUTH_SECRET_FILE} or a client certificate unless this is true: in a secured cluster
   * nobody but the RM may register as the RM with the service.
   */
  public static final String AUTH_INSECURE = PREFIX + "auth.insecure";
  static final String HADOOP_AUTHENTICATION = "hadoop.security.authentication";

  public enum FallbackPolicy { FIFO, NONE }

  /** When proposals are committed ({@link #COMMIT}). */
  public enum Commit { PLAN, HEARTBEAT }

  private final String serviceHost;
  private final int servicePort;
  private final long tickMs;
  private final long planMaxAgeMs;
  private final long rpcTimeoutMs;
  private final long reconnectBackoffMs;
  private final FallbackPolicy fallbackPolicy;
  private final Commit commit;
  private final long fallbackAfterMs;
  private final String rmId;
  private final double amShareMax;
  private final String uiAddress;
  private final String secret;
  private final String tlsCaFile;
  private final String tlsCertFile;
  private final String tlsKeyFile;

  private ShimConfig(Configuration conf) {
    List<String> errors = new ArrayList<>();
    String address = conf.getTrimmed(SERVICE_ADDRESS, DEFAULT_SERVICE_ADDRESS);
    String host = "";
    int port = -1;
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      errors.add(SERVICE_ADDRESS + "=" + address + ": expected host:port");
    } else {
      host = address.substring(0, colon);
      try {
        port = Integer.parseInt(address.substring(colon + 1));
        if (port < 1 || port > 65535) {
          errors.add(SERVICE_ADDRESS + "=" + address + ": port must be in 1..65535");
        }
      } catch (NumberFormatException e) {
        errors.add(SERVICE_ADDRESS + "=" + address + ": port is not a number");
      }
    }
    this.serviceHost = host;
    this.servicePort = port;
    this.tickMs = positiveLong(conf, TICK_MS, DEFAULT_TICK_MS, 10, 60_000, errors);
    this.planMaxAgeMs = positiveLong(conf, PLAN_MAX_AGE_MS, DEFAULT_PLAN_MAX_AGE_MS, 50, 3_600_000, errors);
    this.rpcTimeoutMs = positiveLong(conf, RPC_TIMEOUT_MS, DEFAULT_RPC_TIMEOUT_MS, 10, 600_000, errors);
    this.reconnectBackoffMs =
        positiveLong(conf, RECONNECT_BACKOFF_MS, DEFAULT_RECONNECT_BACKOFF_MS, 10, 600_000, errors);
    this.fallbackAfterMs = positiveLong(conf, FALLBACK_AFTER_MS, DEFAULT_FALLBACK_AFTER_MS, 0, 86_400_000, errors);
    String policy = conf.getTrimmed(FALLBACK_POLICY, DEFAULT_FALLBACK_POLICY).toUpperCase(Locale.ROOT);
    FallbackPolicy parsed = FallbackPolicy.FIFO;
    try {
      parsed = FallbackPolicy.valueOf(policy);
    } catch (IllegalArgumentException e) {
      errors.add(FALLBACK_POLICY + "=" + conf.get(FALLBACK_POLICY) + ": expected one of fifo, none");
    }
    this.fallbackPolicy = parsed;
    String rawCommit = conf.getTrimmed(COMMIT, DEFAULT_COMMIT);
    Commit commitParsed = Commit.PLAN;
    try {
      commitParsed = Commit.valueOf(rawCommit.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      errors.add(COMMIT + "=" + rawCommit + ": expected one of plan, heartbeat");
    }
    this.commit = commitParsed;
    double share = DEFAULT_AM_SHARE_MAX;
    String rawShare = conf.getTrimmed(AM_SHARE_MAX);
    if (rawShare != null && !rawShare.isEmpty()) {
      try {
        share = Double.parseDouble(rawShare);
        if (!(share > 0 && share <= 1)) {
          errors.add(AM_SHARE_MAX + "=" + rawShare + ": must be in (0, 1]");
          share = DEFAULT_AM_SHARE_MAX;
        }
      } catch (NumberFormatException e) {
        errors.add(AM_SHARE_MAX + "=" + rawShare + ": not a number");
      }
    }
    this.amShareMax = share;
    String configuredId = conf.getTrimmed(RM_ID, "");
    this.rmId = configuredId.isEmpty() ? conf.getTrimmed("yarn.resourcemanager.cluster-id", "yarn-cluster")
        : configuredId;
    String ui = conf.getTrimmed(UI_ADDRESS, "");
    if (!ui.isEmpty() && (!(ui.startsWith("http://") || ui.startsWith("https://")) || ui.length() > MAX_UI_ADDRESS
        || !ui.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '"' && c != '<' && c != '>'))) {
      errors.add(UI_ADDRESS + "=" + ui + ": expected an http:// or https:// address of at most " + MAX_UI_ADDRESS
          + " printable characters");
      ui = "";
    }
    while (ui.endsWith("/")) {
      ui = ui.substring(0, ui.length() - 1);
    }
    this.uiAddress = ui;
    String secretFile = conf.getTrimmed(AUTH_SECRET_FILE, "");
    String readSecret = "";
    if (!secretFile.isEmpty()) {
      try {
        readSecret = io.dollymp.yarn.scheduler.client.ChannelSecurity.readSecret(secretFile);
      } catch (java.io.IOException e) {
        errors.add(AUTH_SECRET_FILE + "=" + secretFile + ": " + e.getMessage());
      }
    }
    this.secret = readSecret;
    this.tlsCaFile = readableFile(conf, TLS_CA_FILE, errors);
    this.tlsCertFile = readableFile(conf, TLS_CERT_FILE, errors);
    this.tlsKeyFile = readableFile(conf, TLS_KEY_FILE, errors);
    if (tlsCertFile.isEmpty() != tlsKeyFile.isEmpty()) {
      errors.add(TLS_CERT_FILE + " and " + TLS_KEY_FILE + " must be set together");
    }
    if (!tlsCertFile.isEmpty() && tlsCaFile.isEmpty()) {
      errors.add(TLS_CERT_FILE + ": a client certificate needs " + TLS_CA_FILE + " (TLS)");
    }
    String hadoopAuth = conf.getTrimmed(HADOOP_AUTHENTICATION, "simple");
    if (!"simple".equalsIgnoreCase(hadoopAuth) && secretFile.isEmpty() && tlsCertFile.isEmpty()
        && !conf.getBoolean(AUTH_INSECURE, false)) {
      errors.add(AUTH_SECRET_FILE + ": required when " + HADOOP_AUTHENTICATION + "=" + hadoopAuth + " (or "
          + TLS_CERT_FILE + " for mutual TLS; " + AUTH_INSECURE + "=true to run without)");
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("Invalid DollyMP scheduler configuration: " + String.join("; ", errors));
    }
  }

  /** Reads and validates; throws IllegalArgumentException naming every invalid key. */
  public static ShimConfig from(Configuration conf) {
    return new ShimConfig(conf);
  }

  private static String readableFile(Configuration conf, String key, List<String> errors) {
    String path = conf.getTrimmed(key, "");
    if (!path.isEmpty() && !java.nio.file.Files.isReadable(java.nio.file.Paths.get(path))) {
      errors.add(key + "=" + path + ": not a readable file");
    }
    return path;
  }

  private static long positiveLong(Configuration conf, String key, long dflt, long min, long max,
      List<String> errors) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return dflt;
    }
    try {
      long v = Long.parseLong(raw);
      if (v < min || v > max) {
        errors.add(key + "=" + raw + ": must be in " + min + ".." + max);
        return dflt;
      }
      return v;
    } catch (NumberFormatException e) {
      errors.add(key + "=" + raw + ": not an integer");
      return dflt;
    }
  }

  /** Whether {@code other} connects to the service the same way (address, identity, timings of the client). */
  public boolean sameConnection(ShimConfig other) {
    return other != null && serviceHost.equals(other.serviceHost) && servicePort == other.servicePort
        && rmId.equals(other.rmId) && tickMs == other.tickMs && planMaxAgeMs == other.planMaxAgeMs
        && rpcTimeoutMs == other.rpcTimeoutMs && reconnectBackoffMs == other.reconnectBackoffMs
        && secret.equals(other.secret) && tlsCaFile.equals(other.tlsCaFile)
        && tlsCertFile.equals(other.tlsCertFile) && tlsKeyFile.equals(other.tlsKeyFile);
  }

  public String serviceHost() { return serviceHost; }
  public int servicePort() { return servicePort; }
  public long tickMs() { return tickMs; }
  public long planMaxAgeMs() { return planMaxAgeMs; }
  public long rpcTimeoutMs() { return rpcTimeoutMs; }
  public long reconnectBackoffMs() { return reconnectBackoffMs; }
  public FallbackPolicy fallbackPolicy() { return fallbackPolicy; }
  public long fallbackAfterMs() { return fallbackAfterMs; }
  public Commit commit() { return commit; }
  public String rmId() { return rmId; }
  public double amShareMax() { return amShareMax; }
  /** The service's HTTP address without a trailing slash; "" when not configured. */
  public String uiAddress() { return uiAddress; }
  /** The shared secret ("" when none is configured). */
  public String secret() { return secret; }
  public String tlsCaFile() { return tlsCaFile; }
  public String tlsCertFile() { return tlsCertFile; }
  public String tlsKeyFile() { return tlsKeyFile; }
}
