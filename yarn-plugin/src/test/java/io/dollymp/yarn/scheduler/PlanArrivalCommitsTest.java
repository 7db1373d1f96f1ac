package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PlanArrivalCommitsTest {
  @Test
  void aPassThatThrowsCostsOnlyThatPass() throws Exception {
    AtomicInteger passes = new AtomicInteger();
    Semaphore done = new Semaphore(0);
    PlanArrivalCommits commits = new PlanArrivalCommits(() -> {
      int n = passes.incrementAndGet();
      done.release();
      if (n == 1) {
        throw new IllegalStateException("a shim bug in the first pass");
      }
    });
    try {
      commits.planArrived();
      assertTrue(done.tryAcquire(5, TimeUnit.SECONDS), "the first pass never ran");
      commits.planArrived();
      assertTrue(done.tryAcquire(5, TimeUnit.SECONDS), "no pass after one that threw");
      assertEquals(2, passes.get());
    } finally {
      commits.stop();
    }
  }

  @Test
  void plansArrivingDuringAPassAreTakenByOneMorePass() throws Exception {
    AtomicInteger passes = new AtomicInteger();
    CountDownLatch inFirst = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Semaphore done = new Semaphore(0);
    PlanArrivalCommits commits = new PlanArrivalCommits(() -> {
      if (passes.incrementAndGet() == 1) {
        inFirst.countDown();
        try {
          release.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      done.release();
    });
    try {
      commits.planArrived();
      assertTrue(inFirst.await(5, TimeUnit.SECONDS), "the first pass never ran");
      for (int i = 0; i < 50; i++) {
        commits.planArrived(); // never blocks the caller (the client's gRPC thread)
      }
      release.countDown();
      assertTrue(done.tryAcquire(2, 5, TimeUnit.SECONDS), "the plans that arrived during the pass were not taken");
      assertTrue(!done.tryAcquire(300, TimeUnit.MILLISECONDS), "50 signals during one pass ran more than one more");
      assertEquals(2, passes.get());
    } finally {
      commits.stop();
    }
  }

  @Test
  void afterStopASignalIsDroppedForTheHeartbeats() {
    AtomicInteger passes = new AtomicInteger();
    PlanArrivalCommits commits = new PlanArrivalCommits(passes::incrementAndGet);
    commits.stop();
    commits.planArrived(); // the executor refuses it: no exception reaches the caller
    assertEquals(0, passes.get());
  }
}
