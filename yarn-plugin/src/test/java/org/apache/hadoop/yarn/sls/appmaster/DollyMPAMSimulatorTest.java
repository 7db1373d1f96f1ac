package org.apache.hadoop.yarn.sls.appmaster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The trace converter's job ids (job_<arrival ms>_<index>) as the AM simulator reads them. */
class DollyMPAMSimulatorTest {
  @Test
  void theJobIdCarriesArrivalAndPosition() {
    assertEquals(12_345L, DollyMPAMSimulator.arrivalMs("job_12345_0007"));
    assertEquals(7, DollyMPAMSimulator.jobIndex("job_12345_0007"));
    assertEquals(0L, DollyMPAMSimulator.arrivalMs("job_0_0000"));
  }

  @Test
  void otherIdsStartAtOnceWithAStableIndex() {
    assertEquals(0L, DollyMPAMSimulator.arrivalMs("job_1796290774593_local_3"));
    assertEquals(0L, DollyMPAMSimulator.arrivalMs(null));
    assertEquals(0, DollyMPAMSimulator.jobIndex(null));
    assertEquals(DollyMPAMSimulator.jobIndex("synthetic-x"), DollyMPAMSimulator.jobIndex("synthetic-x"));
  }
}
