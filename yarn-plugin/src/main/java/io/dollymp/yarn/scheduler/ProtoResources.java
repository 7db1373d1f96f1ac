package io.dollymp.yarn.scheduler;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;

/** Conversions between YARN resources and the wire's multi-dimensional Resource. */
final class ProtoResources {
  private ProtoResources() {}

  static io.dollymp.proto.v1.Resource toProto(Resource r) {
    io.dollymp.proto.v1.Resource.Builder b = io.dollymp.proto.v1.Resource.newBuilder()
        .setMemoryMb(r.getMemorySize())
        .setVcores(r.getVirtualCores());
    ResourceInformation[] infos = r.getResources();
    for (int i = 2; i < infos.length; i++) { // 0 = memory-mb, 1 = vcores by YARN's convention
      b.putOthers(infos[i].getName(), infos[i].getValue());
    }
    return b.build();
  }
}
