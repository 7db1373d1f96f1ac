package io.dollymp.yarn.testkit;

import io.dollymp.proto.v1.Ask;
import io.dollymp.proto.v1.BatchStatus;
import io.dollymp.proto.v1.DecisionReason;
import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.Plan;
import io.dollymp.proto.v1.RegisterRequest;
import io.dollymp.proto.v1.RegisterResponse;
import io.dollymp.proto.v1.SchedulerServiceGrpc;
import io.dollymp.proto.v1.StateBatch;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A decision service that does the wrong thing on purpose: every ask that carries a blacklist is
 * placed, whole, on its first blacklisted place (a node id). It proves the shim itself refuses such
 * placements, whatever the service proposes. Answers every batch with a plan, so the session runs.
 */
public final class BlacklistBlindService implements AutoCloseable {
  private final Server server;
  private final AtomicLong epoch = new AtomicLong();
  private final AtomicLong proposed = new AtomicLong();
  private final Set<String> nodes = ConcurrentHashMap.newKeySet();

  public BlacklistBlindService(int port) throws IOException {
    this.server = Grpc.newServerBuilderForPort(port, InsecureServerCredentials.create())
        .addService(new Impl())
        .build()
        .start();
  }

  /** Containers proposed on blacklisted places so far. */
  public long proposed() {
    return proposed.get();
  }

  /** The node id a blacklisted node name stands for: equal, or the same port (the mini cluster's NMs share a host). */
  private String nodeNamed(String place) {
    for (String id : nodes) {
      if (id.equals(place) || place.contains(":") && id.endsWith(place.substring(place.lastIndexOf(':')))) {
        return id;
      }
    }
    return null;
  }

  private final class Impl extends SchedulerServiceGrpc.SchedulerServiceImplBase {
    @Override
    public void register(RegisterRequest request, StreamObserver<RegisterResponse> response) {
      response.onNext(RegisterResponse.newBuilder().setSessionId("blind-" + System.nanoTime())
          .setPolicy("blacklist-blind").setServiceVersion("test").setEpoch(epoch.get() + 1).build());
      response.onCompleted();
    }

    @Override
    public StreamObserver<StateBatch> sync(StreamObserver<Plan> plans) {
      return new StreamObserver<>() {
        @Override
        public void onNext(StateBatch batch) {
          batch.getNodesUpsertedList().forEach(n -> nodes.add(n.getNodeId()));
          Plan.Builder plan = Plan.newBuilder().setSessionId(batch.getSessionId()).setEpoch(epoch.incrementAndGet())
              .setInReplyToSeq(batch.getSeq()).setStatus(BatchStatus.BATCH_ACCEPTED);
          for (Ask ask : batch.getAsksList()) {
            String node = ask.getBlacklistCount() == 0 ? null : nodeNamed(ask.getBlacklist(0));
            if (ask.getNumContainers() > 0 && node != null) {
              plan.addPlacements(Placement.newBuilder().setPlacementId("blind-" + epoch.get() + "-" + ask.getPriority())
                  .setAttemptId(ask.getAttemptId()).setPriority(ask.getPriority())
                  .setAllocationRequestId(ask.getAllocationRequestId()).setNodeId(node)
                  .setCapability(ask.getCapability()).setCount(ask.getNumContainers())
                  .setReason(DecisionReason.REASON_FCFS_ORDER).setDetail("ignores the blacklist"));
              proposed.addAndGet(ask.getNumContainers());
            }
          }
          synchronized (plans) {
            plans.onNext(plan.build());
          }
        }

        @Override
        public void onError(Throwable t) {
          // the shim went away
        }

        @Override
        public void onCompleted() {
          synchronized (plans) {
            plans.onCompleted();
          }
        }
      };
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
