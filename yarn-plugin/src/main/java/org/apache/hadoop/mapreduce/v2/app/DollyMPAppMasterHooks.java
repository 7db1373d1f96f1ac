package org.apache.hadoop.mapreduce.v2.app;

/** Gives the DollyMP AM Hadoop's own (package-private) AM shutdown hook, so SIGTERM behaves as in stock Hadoop. */
public final class DollyMPAppMasterHooks {
  private DollyMPAppMasterHooks() {}

  public static Runnable shutdownHook(MRAppMaster appMaster) {
    return new MRAppMaster.MRAppMasterShutdownHook(appMaster);
  }
}
