declare module "pidusage" {
  interface Stat {
    /** Percent of one core (0 to 100 × cores) since the previous sample. */
    cpu: number;
    /** Resident memory in bytes. */
    memory: number;
    ppid: number;
    pid: number;
    /** ms of user + system time. */
    ctime: number;
    /** ms since the process started. */
    elapsed: number;
    timestamp: number;
  }
  function pidusage(pid: number): Promise<Stat>;
  export default pidusage;
}
