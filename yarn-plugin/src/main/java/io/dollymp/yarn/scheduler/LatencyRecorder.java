package io.dollymp.yarn.scheduler;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A lock-free latency histogram for the RM event thread: log-linear buckets from 1 µs to ~17 s with
 * 8 sub-buckets per power of two (relative error under 13%). Recording is one array increment.
 */
public final class LatencyRecorder {
  private static final int SUB = 8;
  private static final int POWERS = 34; // 2^34 ns ~ 17 s
  private final AtomicLongArray buckets = new AtomicLongArray(POWERS * SUB + 1);

  public void recordNanos(long nanos) {
    buckets.incrementAndGet(bucketOf(Math.max(0, nanos)));
  }

  static int bucketOf(long nanos) {
    if (nanos < SUB) {
      return (int) nanos;
    }
    int power = 63 - Long.numberOfLeadingZeros(nanos); // floor(log2)
    int sub = (int) ((nanos >>> (power - 3)) & (SUB - 1));
    int idx = (power - 2) * SUB + sub;
    return Math.min(idx, POWERS * SUB);
  }

  /** Upper bound, in nanoseconds, of the bucket with index {@code idx}. */
  static long upperBound(int idx) {
    if (idx < SUB) {
      return idx + 1;
    }
    int power = idx / SUB + 2;
    int sub = idx % SUB;
    return (long) (SUB + sub + 1) << (power - 3);
  }

  public long count() {
    long n = 0;
    for (int i = 0; i < buckets.length(); i++) {
      n += buckets.get(i);
    }
    return n;
  }

  /** The q-quantile (0 < q <= 1) in milliseconds; 0 when nothing was recorded. */
  public double quantileMs(double q) {
    long total = count();
    if (total == 0) {
      return 0;
    }
    long rank = (long) Math.ceil(q * total);
    long seen = 0;
    for (int i = 0; i < buckets.length(); i++) {
      seen += buckets.get(i);
      if (seen >= rank) {
        return upperBound(i) / 1e6;
      }
    }
    return upperBound(buckets.length() - 1) / 1e6;
  }

  public void reset() {
    for (int i = 0; i < buckets.length(); i++) {
      buckets.set(i, 0);
    }
  }
}
