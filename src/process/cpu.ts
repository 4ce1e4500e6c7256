/** What a process was doing when it was judged stuck: busy or idle tells a person where to look. */
export interface CpuSample {
  /** Percent of one core over the sampling window. */
  cpu_percent: number;
  window_ms: number;
  rss_bytes: number;
  /** ms of CPU used since it started. */
  cpu_time_ms: number;
}

/** Samples a process's CPU over `windowMs` (two readings; pidusage takes the difference). */
export async function sampleCpu(pid: number, windowMs = 500): Promise<CpuSample | null> {
  try {
    const { default: pidusage } = await import("pidusage");
    await pidusage(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    const s = await pidusage(pid);
    return {
      cpu_percent: Math.round(s.cpu * 10) / 10,
      window_ms: windowMs,
      rss_bytes: s.memory,
      cpu_time_ms: s.ctime,
    };
  } catch {
    return null; // gone meanwhile, or not measurable here
  }
}

/** `busy: 98% of a core` / `idle: 0% of a core`, with memory, for the evidence README. */
export function describeCpu(s: CpuSample | null): string {
  if (!s) return "cpu: could not be sampled";
  const state = s.cpu_percent >= 50 ? "busy" : s.cpu_percent >= 5 ? "some work" : "idle";
  const mb = Math.round(s.rss_bytes / 1024 / 1024);
  return `cpu: ${state}, ${s.cpu_percent}% of a core over ${s.window_ms} ms; ${mb} MB resident; ${Math.round(s.cpu_time_ms / 1000)} s of CPU since it started`;
}
