package io.dollymp.yarn.scheduler.queue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueState;

/**
 * Reads the queue tree from CapacityScheduler's keys (the documented subset, README "Queues"),
 * validating every value once; an invalid one stops start-up (or refuses a {@code -refreshQueues})
 * with a message naming the key. Keys outside the subset are reported as warnings, never silently used.
 */
public final class QueueConfigReader {
  public static final String PREFIX = "yarn.scheduler.capacity.";
  public static final String ROOT = "root";
  public static final String MAPPINGS = PREFIX + "queue-mappings";
  public static final String MAPPINGS_OVERRIDE = PREFIX + "queue-mappings-override.enable";
  /**
   * CapacityScheduler's cluster-wide default of every leaf's {@code maximum-am-resource-percent}. Unset, a leaf
   * without its own key has no per-queue AM limit (CapacityScheduler would use 0.1): the shim's cluster-wide
   * {@code yarn.scheduler.dollymp.am-share.max} alone applies, as before the per-queue limit existed.
   */
  public static final String MAX_AM_PERCENT = PREFIX + "maximum-am-resource-percent";
  /** Bounds on what a configuration may declare (a hostile or mistaken file cannot exhaust the RM). */
  static final int MAX_QUEUES = 1024;
  static final int MAX_DEPTH = 16;
  static final int MAX_MAPPINGS = 1024;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_\\-]{1,64}");
  private static final Set<String> QUEUE_KEYS = new HashSet<String>(Arrays.asList("queues", "capacity",
      "maximum-capacity", "user-limit-factor", "maximum-am-resource-percent", "acl_submit_applications",
      "acl_administer_queue", "state", "disable_preemption", "minimum-user-limit-percent"));
  /**
   * Global CapacityScheduler keys not warned about: read (the mappings, maximum-am-resource-percent) or harmless
   * to leave in a migrated file (the shim has its own).
   */
  private static final Set<String> IGNORED_GLOBAL = new HashSet<String>(Arrays.asList("maximum-applications",
      "maximum-am-resource-percent", "resource-calculator", "node-locality-delay",
      "queue-mappings-override.enable", "queue-mappings"));

  private final Configuration conf;
  private final List<String> errors = new ArrayList<String>();
  private final List<String> warnings = new ArrayList<String>();
  private final Map<String, QueueSettings> queues = new LinkedHashMap<String, QueueSettings>();
  private boolean stock;
  /** The global maximum-am-resource-percent, or NaN when unset. */
  private float globalAm = Float.NaN;
  /** After how long a queue's unmet guarantee preempts originals (PreemptionKeys; 0: the monitor is off). */
  private long preemptAfterMs;

  private QueueConfigReader(Configuration conf) {
    this.conf = conf;
  }

  /** The tree's queues, root first then depth-first; throws IllegalArgumentException naming each bad key. */
  public static QueueConfig read(Configuration conf) {
    QueueConfigReader r = new QueueConfigReader(conf);
    r.globalAm = r.amPercent(MAX_AM_PERCENT, Float.NaN);
    r.preemptAfterMs = PreemptionKeys.originalsAfterMs(conf, r.errors);
    r.readQueue(ROOT, 0, 100f, false);
    List<QueueMapping> mappings = r.readMappings();
    r.checkUnsupportedKeys();
    if (!r.errors.isEmpty()) {
      throw new IllegalArgumentException("Invalid queue configuration: " + String.join("; ", r.errors));
    }
    return new QueueConfig(r.queues, mappings, conf.getBoolean(MAPPINGS_OVERRIDE, false), r.warnings);
  }

  private void readQueue(String path, int depth, float parentMax, boolean parentNoPreemption) {
    if (queues.size() >= MAX_QUEUES) {
      errors.add(PREFIX + path + ": more than " + MAX_QUEUES + " queues");
      return;
    }
    String prefix = PREFIX + path + ".";
    List<String> children = new ArrayList<String>();
    String rawChildren = conf.getTrimmed(prefix + "queues");
    if (rawChildren == null && ROOT.equals(path)) {
      rawChildren = "default"; // no configuration at all: CapacityScheduler's stock tree, root.default = 100%
      stock = true;
    }
    if (rawChildren != null && !rawChildren.isEmpty()) {
      for (String child : rawChildren.split(",")) {
        String name = child.trim();
        if (!NAME.matcher(name).matches()) {
          errors.add(prefix + "queues=" + rawChildren + ": queue name '" + name
              + "' must be 1-64 letters, digits, '_' or '-'");
        } else if (children.contains(name)) {
          errors.add(prefix + "queues=" + rawChildren + ": queue '" + name + "' listed twice");
        } else {
          children.add(name);
        }
      }
    }
    if (!children.isEmpty() && depth + 1 >= MAX_DEPTH) {
      errors.add(prefix + "queues: the tree is deeper than " + MAX_DEPTH + " levels");
      children.clear();
    }
    boolean root = ROOT.equals(path);
    boolean stockLeaf = stock && depth == 1;
    float capacity = root ? 100f : percent(prefix + "capacity", stockLeaf ? 100f : 0f, false);
    float max = root ? 100f : percent(prefix + "maximum-capacity", 100f, true);
    if (max < capacity) {
      errors.add(prefix + "maximum-capacity=" + max + ": must not be below " + prefix + "capacity=" + capacity);
    }
    float ulf = number(prefix + "user-limit-factor", 1f);
    if (ulf != -1f && !(ulf > 0f) || ulf > 1_000_000f) {
      errors.add(prefix + "user-limit-factor=" + ulf + ": must be > 0 (or -1 for no limit)");
    }
    float am = amPercent(prefix + "maximum-am-resource-percent", globalAm);
    float mulp = number(prefix + "minimum-user-limit-percent", 100f);
    if (!(mulp > 0f && mulp <= 100f)) {
      errors.add(prefix + "minimum-user-limit-percent=" + mulp + ": must be in (0, 100]");
      mulp = 100f;
    }
    QueueState state = QueueState.RUNNING;
    String rawState = conf.getTrimmed(prefix + "state");
    if (rawState != null && !rawState.isEmpty()) {
      try {
        state = QueueState.valueOf(rawState.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        state = QueueState.RUNNING;
      }
      if (state != QueueState.RUNNING && state != QueueState.STOPPED
          || !rawState.equalsIgnoreCase(state.name())) {
        errors.add(prefix + "state=" + rawState + ": expected RUNNING or STOPPED");
        state = QueueState.RUNNING;
      }
    }
    // CapacityScheduler's defaults: the root allows everyone, other queues add nobody (they inherit the root's).
    AccessControlList submit = new AccessControlList(conf.get(prefix + "acl_submit_applications", root ? "*" : " "));
    AccessControlList admin = new AccessControlList(conf.get(prefix + "acl_administer_queue", root ? "*" : " "));
    boolean noPreemption = PreemptionKeys.disabled(conf, prefix + "disable_preemption", parentNoPreemption, errors);
    queues.put(path, new QueueSettings(path, children, capacity, max, ulf, am, submit, admin, state,
        noPreemption ? 0L : preemptAfterMs, mulp));
    float sum = 0f;
    for (String child : children) {
      readQueue(path + "." + child, depth + 1, max, noPreemption);
      QueueSettings c = queues.get(path + "." + child);
      sum += c == null ? 0f : c.capacity;
    }
    if (!children.isEmpty() && Math.abs(sum - 100f) > 1e-3f) {
      errors.add(prefix + "queues=" + String.join(",", children) + ": the children's capacities sum to " + sum
          + ", must sum to 100");
    }
  }

  /** A maximum-am-resource-percent: a fraction in (0, 1], or {@code dflt} when unset or invalid. */
  private float amPercent(String key, float dflt) {
    float am = number(key, dflt);
    if (!Float.isNaN(am) && !(am > 0f && am <= 1f)) {
      errors.add(key + "=" + am + ": must be in (0, 1]");
      return dflt;
    }
    return am;
  }

  /** A percentage in [0, 100]; CapacityScheduler's -1 for "maximum" means 100. */
  private float percent(String key, float dflt, boolean minusOneIsMax) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return dflt;
    }
    if (raw.endsWith("w") || raw.startsWith("[")) {
      errors.add(key + "=" + raw + ": weights and absolute resources are not supported (use a percentage)");
      return dflt;
    }
    float v = number(key, dflt);
    if (minusOneIsMax && v == -1f) {
      return 100f;
    }
    if (!(v >= 0f && v <= 100f)) {
      errors.add(key + "=" + raw + ": must be a percentage in 0..100");
      return dflt;
    }
    return v;
  }

  private float number(String key, float dflt) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return dflt;
    }
    try {
      float v = Float.parseFloat(raw);
      if (Float.isNaN(v) || Float.isInfinite(v)) {
        errors.add(key + "=" + raw + ": not a finite number");
        return dflt;
      }
      return v;
    } catch (NumberFormatException e) {
      errors.add(key + "=" + raw + ": not a number");
      return dflt;
    }
  }

  /** {@code u:user:queue} and {@code g:group:queue}, in order; the first that matches places the application. */
  private List<QueueMapping> readMappings() {
    List<QueueMapping> out = new ArrayList<QueueMapping>();
    String raw = conf.getTrimmed(MAPPINGS);
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    String[] entries = raw.split(",");
    if (entries.length > MAX_MAPPINGS) {
      errors.add(MAPPINGS + ": more than " + MAX_MAPPINGS + " mappings");
      return out;
    }
    for (String entry : entries) {
      String[] parts = entry.trim().split(":");
      if (parts.length != 3 || !("u".equals(parts[0]) || "g".equals(parts[0])) || parts[1].isEmpty()
          || parts[2].isEmpty()) {
        errors.add(MAPPINGS + ": '" + entry.trim() + "' is not u:<user>:<queue> or g:<group>:<queue>");
        continue;
      }
      String target = parts[2];
      if (!QueueMapping.USER.equals(target) && QueueConfig.resolve(queues, target) == null) {
        errors.add(MAPPINGS + ": '" + entry.trim() + "' maps to " + target + ", which is not a leaf queue");
        continue;
      }
      out.add(new QueueMapping("g".equals(parts[0]), parts[1], target));
    }
    return out;
  }

  private void checkUnsupportedKeys() {
    for (Map.Entry<String, String> e : conf) {
      String key = e.getKey();
      if (!key.startsWith(PREFIX)) {
        continue;
      }
      String rest = key.substring(PREFIX.length());
      if (IGNORED_GLOBAL.contains(rest)) {
        continue;
      }
      int dot = rest.lastIndexOf('.');
      String path = dot < 0 ? "" : rest.substring(0, dot);
      if (!(queues.containsKey(path) && QUEUE_KEYS.contains(rest.substring(dot + 1)))) {
        warnings.add(key + " is not read by the DollyMP scheduler (ignored)");
      }
    }
  }
}
