package io.dollymp.yarn.sls;

import java.util.Locale;

/**
 * The straggler model of {@code dollymp simulate} (pyscheduler/sim/straggler.py), for simulated attempts:
 * an attempt runs base time x slowdown, the slowdown of the n-th copy (0 = the original) of task t of phase
 * k of job j fixed by (seed, j, k, t, n) through the same SplitMix64 hash ({@code copy_unit}), so the same
 * seed gives the same copy the same slowdown here and in the simulator, whatever order copies start in.
 *
 * <p>Models, as {@code --straggler} spells them: {@code pareto:alpha=A[,xm=X][,cap=C]} (Pareto slowdown,
 * truncated at C), {@code empirical} (an original runs its own base time, every extra copy the base time of
 * a task of the same phase drawn uniformly) and {@code none}.
 */
public final class StragglerDraws {
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private final String kind;
  private final double xm;
  private final double expo;
  private final double scale;
  private final long seed;

  private StragglerDraws(String kind, double alpha, double xm, double cap, long seed) {
    this.kind = kind;
    this.xm = xm;
    this.expo = alpha > 0 ? -1.0 / alpha : 0.0;
    this.scale = Double.isInfinite(cap) ? 1.0 : 1.0 - Math.pow(xm / cap, alpha);
    this.seed = seed;
  }

  /** Parses the simulator's spelling; an error names the offending part. */
  public static StragglerDraws parse(String spec, long seed) {
    String text = spec == null ? "" : spec.trim();
    int colon = text.indexOf(':');
    String kind = (colon < 0 ? text : text.substring(0, colon)).trim().toLowerCase(Locale.ROOT);
    String params = colon < 0 ? "" : text.substring(colon + 1);
    if (kind.equals("none") || kind.equals("empirical")) {
      if (!params.trim().isEmpty()) {
        throw new IllegalArgumentException("straggler " + kind + " takes no parameters, got '" + params + "'");
      }
      return new StragglerDraws(kind, 0, 1, Double.POSITIVE_INFINITY, seed);
    }
    if (!kind.equals("pareto")) {
      throw new IllegalArgumentException("straggler: unknown model '" + kind + "' (pareto:alpha=A, empirical, none)");
    }
    double alpha = 1.5;
    double xm = 1.0;
    double cap = Double.POSITIVE_INFINITY;
    for (String item : params.split(",")) {
      String it = item.trim();
      if (it.isEmpty()) {
        continue;
      }
      int eq = it.indexOf('=');
      String key = eq < 0 ? it : it.substring(0, eq).trim();
      double v;
      try {
        v = Double.parseDouble(eq < 0 ? "" : it.substring(eq + 1).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("straggler pareto: '" + key + "' must be a number, got '" + it + "'", e);
      }
      if (!(v > 0)) {
        throw new IllegalArgumentException("straggler pareto: '" + key + "' must be > 0, got '" + it + "'");
      }
      switch (key) {
        case "alpha":
          alpha = v;
          break;
        case "xm":
          xm = v;
          break;
        case "cap":
          cap = v;
          break;
        default:
          throw new IllegalArgumentException("straggler pareto: unknown parameter '" + it + "' (alpha, xm, cap)");
      }
    }
    if (cap < xm) {
      throw new IllegalArgumentException("straggler pareto: 'cap' must be >= 'xm'");
    }
    return new StragglerDraws("pareto", alpha, xm, cap, seed);
  }

  public String kind() {
    return kind;
  }

  /** SplitMix64's finaliser, as straggler.py {@code _mix64} (Java's long arithmetic wraps modulo 2^64). */
  static long mix64(long x) {
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }

  /** straggler.py {@code copy_unit}: a uniform number in [0, 1) fixed by its arguments. */
  public static double copyUnit(long seed, long job, long phase, long task, long nth, long stream) {
    long x = mix64(seed ^ GOLDEN);
    for (long part : new long[] {job, phase, task, nth, stream}) {
      x = mix64(x + part * GOLDEN);
    }
    return (x >>> 11) * 0x1.0p-53;
  }

  /** The slowdown of the nth copy of a task (1 for {@code none} and {@code empirical}). */
  public double slowdown(int job, int phase, int task, int nth) {
    if (!kind.equals("pareto")) {
      return 1.0;
    }
    double u = copyUnit(seed, job, phase, task, nth, 0);
    return xm * Math.pow(1.0 - u * scale, expo);
  }

  /**
   * Run time of the nth copy of task {@code task} whose phase's base times are {@code phaseBases} (ms), as
   * straggler.py {@code copy_time}: base x slowdown, or for {@code empirical} a clone's base drawn from the
   * phase ({@code clone}: the copy is an extra copy, not a relaunch).
   */
  public long copyTimeMs(int job, int phase, int task, int nth, boolean clone, long[] phaseBases) {
    long base = phaseBases[task];
    if (kind.equals("empirical")) {
      if (!clone) {
        return base;
      }
      double u = copyUnit(seed, job, phase, task, nth, 1);
      return phaseBases[Math.min(phaseBases.length - 1, (int) (u * phaseBases.length))];
    }
    return Math.max(1L, Math.round(base * slowdown(job, phase, task, nth)));
  }
}
