import { doctorRoots, runChecks } from "../doctor/checks.js";
import { humanReport, jsonReport } from "../doctor/report.js";
import { EXIT, UsageError } from "../errors.js";
import { parseCommandArgs } from "../util/args.js";

/** Observes and changes nothing; reports what it sees. Exit 1 when any check fails. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("doctor", argv);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog doctor: --all and --program cannot be used together");
  const checks = runChecks(doctorRoots(values.program, values.all));
  process.stdout.write(values.json ? jsonReport(checks) : humanReport(checks));
  return checks.some((c) => c.status === "fail") ? EXIT.failed : EXIT.ok;
}
