package io.dollymp.yarn.sls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The SLS AM's draws equal the simulator's (values printed by pyscheduler/sim/straggler.py). */
class StragglerDrawsTest {
  @Test
  void copyUnitIsTheSimulatorsHash() {
    assertEquals(0.69555068941445, StragglerDraws.copyUnit(1, 0, 0, 0, 0, 0), 1e-15);
    assertEquals(0.16230943808102283, StragglerDraws.copyUnit(7, 12, 1, 3, 2, 0), 1e-15);
    assertEquals(0.18825944579048193, StragglerDraws.copyUnit(-5, 123456, 0, 99, 1, 1), 1e-15);
  }

  @Test
  void paretoSlowdownsAndRunTimesMatch() {
    StragglerDraws d = StragglerDraws.parse("pareto:alpha=1.5,cap=20", 7);
    assertEquals(1.1237017580835666, d.slowdown(12, 1, 3, 2), 1e-12);
    assertEquals(1.2294815007092568, d.slowdown(0, 0, 0, 0), 1e-12);
    // copy_time(4.0, ..., key=(3, 0, 5, 1)) = 11.849540029624563 s
    long[] bases = new long[6];
    bases[5] = 4000;
    assertEquals(11850, d.copyTimeMs(3, 0, 5, 1, false, bases));
  }

  @Test
  void empiricalClonesTakeAPhaseBase() {
    StragglerDraws d = StragglerDraws.parse("empirical", 7);
    long[] bases = {1000, 2000, 3000, 4000};
    assertEquals(2000, d.copyTimeMs(3, 0, 1, 0, false, bases));
    assertEquals(4000, d.copyTimeMs(3, 0, 1, 1, true, bases));
    assertEquals(1.0, d.slowdown(1, 0, 0, 1));
  }

  @Test
  void badSpecsAreRefusedByName() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> StragglerDraws.parse("pareto:beta=2", 1))
        .getMessage().contains("beta"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> StragglerDraws.parse("pareto:alpha=-1", 1))
        .getMessage().contains("alpha"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> StragglerDraws.parse("lognormal", 1))
        .getMessage().contains("lognormal"));
  }
}
