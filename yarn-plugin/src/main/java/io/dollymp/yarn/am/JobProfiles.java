package io.dollymp.yarn.am;

import io.dollymp.proto.v1.JobProfile;
import io.dollymp.proto.v1.PhaseProfile;
import io.dollymp.proto.v1.Resource;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.app.job.Job;

/** The job's profile for the service: map and reduce phases, their asks and the map→reduce edge. */
public final class JobProfiles {
  /** The YARN priorities Hadoop's RMContainerAllocator asks at (MAP=20, REDUCE=10). */
  public static final int MAP_PRIORITY = 20;
  public static final int REDUCE_PRIORITY = 10;

  private JobProfiles() {}

  public static JobProfile of(String appId, Job job, Configuration conf) {
    long submit = job.getReport() == null ? 0 : job.getReport().getSubmitTime();
    return of(appId, job.getName(), job.getTotalMaps(), job.getTotalReduces(), conf,
        submit > 0 ? submit : System.currentTimeMillis());
  }

  public static JobProfile of(String appId, String name, int maps, int reduces, Configuration conf, long submitMs) {
    JobProfile.Builder p = JobProfile.newBuilder().setApplicationId(appId).setJobName(name == null ? "" : name)
        .setSubmitTimeMs(submitMs).setClonesPreemptible(DelayedKillDispatcher.yieldsClones());
    if (maps > 0) {
      p.addPhases(PhaseProfile.newBuilder().setPhaseId("map").setTasks(maps)
          .setDemand(ask(conf, MRJobConfig.MAP_MEMORY_MB, MRJobConfig.MAP_CPU_VCORES))
          .setYarnPriority(MAP_PRIORITY));
    }
    if (reduces > 0) {
      PhaseProfile.Builder r = PhaseProfile.newBuilder().setPhaseId("reduce").setTasks(reduces)
          .setDemand(ask(conf, MRJobConfig.REDUCE_MEMORY_MB, MRJobConfig.REDUCE_CPU_VCORES))
          .setYarnPriority(REDUCE_PRIORITY);
      if (maps > 0) {
        r.addParents("map");
      }
      p.addPhases(r);
    }
    return p.build();
  }

  private static Resource ask(Configuration conf, String memKey, String coresKey) {
    long mem = conf.getLong(memKey, MRJobConfig.DEFAULT_MAP_MEMORY_MB);
    if (mem <= 0) {
      mem = MRJobConfig.DEFAULT_MAP_MEMORY_MB;
    }
    return Resource.newBuilder().setMemoryMb(mem).setVcores(Math.max(1, conf.getInt(coresKey, 1))).build();
  }
}
