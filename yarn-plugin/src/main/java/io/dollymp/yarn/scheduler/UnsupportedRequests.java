package io.dollymp.yarn.scheduler;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.UpdateContainerRequest;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;

/**
 * The parts of an AM's allocate call the shim does not carry out, refused before anything of the call is
 * applied: the RM turns the exception into a YarnException on the AM's allocate (as it does for
 * CapacityScheduler's invalid requests), with a message naming each feature, instead of the request
 * being dropped silently.
 */
final class UnsupportedRequests {
  static final String PREFIX = "DollyMP scheduler does not support ";

  private UnsupportedRequests() {}

  /** Throws naming every unsupported feature used by this allocate call; returns when there is none. */
  static void refuse(List<ResourceRequest> asks, List<SchedulingRequest> schedulingRequests,
      ContainerUpdates updates) {
    List<String> refused = new ArrayList<>();
    if (schedulingRequests != null && !schedulingRequests.isEmpty()) {
      refused.add("SchedulingRequests / placement constraints (" + schedulingRequests.size()
          + " sent; yarn.resourcemanager.placement-constraints.handler=scheduler): ask with ResourceRequests");
    }
    if (updates != null) {
      count(refused, "container resource increase", updates.getIncreaseRequests());
      count(refused, "container resource decrease", updates.getDecreaseRequests());
      count(refused, "container promotion to GUARANTEED", updates.getPromotionRequests());
      count(refused, "container demotion to OPPORTUNISTIC", updates.getDemotionRequests());
    }
    int opportunistic = 0;
    int labelled = 0;
    for (ResourceRequest r : asks == null ? new ArrayList<ResourceRequest>() : asks) {
      if (r.getNumContainers() <= 0) {
        continue;
      }
      if (r.getExecutionTypeRequest() != null
          && r.getExecutionTypeRequest().getExecutionType() == ExecutionType.OPPORTUNISTIC) {
        opportunistic++;
      }
      String label = r.getNodeLabelExpression();
      if (label != null && !label.trim().isEmpty()) {
        labelled++;
      }
    }
    if (opportunistic > 0) {
      refused.add("OPPORTUNISTIC containers (" + opportunistic + " resource requests): ask GUARANTEED ones");
    }
    if (labelled > 0) {
      refused.add("node label expressions (" + labelled + " resource requests): the default partition only");
    }
    if (!refused.isEmpty()) {
      throw refusal(PREFIX + String.join("; ", refused));
    }
  }

  /**
   * The exception the RM's ApplicationMasterService hands to the AM as a YarnException: Hadoop 3.4's
   * SchedulerInvalidResoureRequestException, renamed SchedulerInvalidResourceRequestException in 3.5.
   */
  static RuntimeException refusal(String message) {
    String[] names = {"org.apache.hadoop.yarn.exceptions.SchedulerInvalidResourceRequestException",
        "org.apache.hadoop.yarn.exceptions.SchedulerInvalidResoureRequestException"};
    for (String name : names) {
      try {
        return Class.forName(name).asSubclass(RuntimeException.class).getConstructor(String.class)
            .newInstance(message);
      } catch (ReflectiveOperationException | ClassCastException e) {
        // not this Hadoop version's name
      }
    }
    return new YarnRuntimeException(message);
  }

  private static void count(List<String> refused, String feature, List<UpdateContainerRequest> requests) {
    if (requests != null && !requests.isEmpty()) {
      refused.add(feature + " (" + requests.size() + " UpdateContainerRequests)");
    }
  }
}
