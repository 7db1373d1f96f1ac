package io.dollymp.yarn.scheduler.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A validated queue configuration: the tree's settings by path, the placement mappings, warnings. */
public final class QueueConfig {
  final Map<String, QueueSettings> queues;
  final List<QueueMapping> mappings;
  final boolean mappingsOverride;
  final List<String> warnings;

  QueueConfig(Map<String, QueueSettings> queues, List<QueueMapping> mappings, boolean mappingsOverride,
      List<String> warnings) {
    this.queues = Collections.unmodifiableMap(new LinkedHashMap<String, QueueSettings>(queues));
    this.mappings = Collections.unmodifiableList(new ArrayList<QueueMapping>(mappings));
    this.mappingsOverride = mappingsOverride;
    this.warnings = Collections.unmodifiableList(new ArrayList<String>(warnings));
  }

  public Map<String, QueueSettings> queues() {
    return queues;
  }

  public List<String> warnings() {
    return warnings;
  }

  /**
   * The leaf called {@code name} (its full path, or its short name when exactly one leaf has it), or
   * null: CapacityScheduler's rules for naming a queue at submission.
   */
  static QueueSettings resolve(Map<String, QueueSettings> queues, String name) {
    if (name == null) {
      return null;
    }
    QueueSettings byPath = queues.get(name);
    if (byPath != null) {
      return byPath.isLeaf() ? byPath : null;
    }
    QueueSettings found = null;
    for (QueueSettings q : queues.values()) {
      if (q.isLeaf() && q.name().equals(name)) {
        if (found != null) {
          return null; // ambiguous short name: the full path is required
        }
        found = q;
      }
    }
    return found;
  }
}
