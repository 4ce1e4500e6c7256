import { openProgramAt, selectRoots } from "../config/context.js";
import { EXIT, SheepdogError, UsageError } from "../errors.js";
import { describeSkipped } from "../journal/journal.js";
import type { PageStatus } from "../page/status.js";
import { parseCommandArgs } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { localTime, localTimes } from "../util/local-time.js";
import { alignRows, outputWidth } from "../util/terminal.js";
import { iso } from "../util/time.js";
import type { Facts } from "../watchdog/gather/facts.js";
import { readLastTick } from "../watchdog/gather/gather.js";
import { jsonReport } from "../watchdog/pass/report.js";
import { type ProgramReport, statusOf } from "../watchdog/pass/tick.js";
import { heartbeatAge } from "../watchdog/rules/decide.js";

const ago = (now: number, at: string | null | undefined) =>
  at ? `${formatDuration(now - Date.parse(at))} ago` : "-";

/** Last page, pages not yet delivered, next reminder: one short cell. */
function pagesText(p: PageStatus | undefined, now: number): string {
  if (!p?.configured) return "off";
  const parts = [
    p.last_page ? `last ${p.last_page.kind} ${ago(now, p.last_page.at)}` : "none sent",
  ];
  if (p.undelivered.length > 0) {
    parts.push(
      `${p.undelivered.length} undelivered (${p.undelivered.map((u) => u.kind).join(", ")})`,
    );
  }
  if (p.next_reminder)
    parts.push(`reminder in ${formatDuration(Date.parse(p.next_reminder) - now)}`);
  return parts.join("; ");
}

function row(r: ProgramReport, now: number, stateDir: string | null, leased: boolean): string[] {
  const f = r.facts as Facts | null;
  if (!f)
    return [
      r.program,
      ...(leased ? ["-"] : []),
      "-",
      "-",
      "-",
      "-",
      "-",
      "-",
      "-",
      "-",
      "-",
      `error: ${localTimes(r.reason)}`,
    ];
  const c = f.claim;
  const manager =
    "pid" in c ? `pid ${c.pid} (${formatDuration(now - Date.parse(c.claimed_at))})` : "-";
  const claim = c.state === "none" ? "none" : c.state === "unreadable" ? "unreadable" : c.state;
  const hb = heartbeatAge(f, { cadence: Number.POSITIVE_INFINITY });
  const beat = hb ? (hb.saved ? `${formatDuration(hb.age)} ago` : "no save yet") : "-";
  const tokens = f.heartbeat?.context_tokens;
  const context =
    typeof tokens === "number" && "pid" in c && f.heartbeat?.pid === c.pid ? String(tokens) : "-";
  // The reason is in the NOW column alone: these say only since or until when.
  const pause = f.paused
    ? `until ${localTime(Date.parse(f.paused.until), { seconds: false })}`
    : f.seat.limited
      ? "seat limited"
      : "-";
  const stood = f.stood_down
    ? `since ${ago(now, f.stood_down.at)}`
    : f.finished
      ? `finished ${ago(now, f.finished.at)}`
      : "-";
  const lock = f.merge_lock;
  const merge = !lock
    ? "-"
    : !lock.held
      ? "free"
      : `held${lock.holder ? ` by pid ${lock.holder.pid}` : ""} (${lock.liveness})`;
  const pages = pagesText(f.pages, now);
  const last = stateDir ? readLastTick(stateDir) : null;
  const lastText = last ? `${last.decision} ${ago(now, last.at)}` : "never";
  return [
    r.program,
    manager,
    beat,
    context,
    claim,
    ...(leased ? [leaseText(f, now)] : []),
    pause,
    stood,
    merge,
    pages,
    lastText,
    `${f.config_invalid ? `CONFIG INVALID (${f.config_invalid.error.split("\n")[0]}; judged on the last valid copy) · ` : ""}${r.decision}: ${localTimes(r.reason)}`,
  ];
}

/** The last line: where to see the night as a picture, for the same program(s). */
export function reportHint(values: { program?: string; all?: boolean }): string {
  const which = values.all
    ? " --all"
    : values.program !== undefined
      ? ` --program ${/^[\w./~-]+$/.test(values.program) ? values.program : JSON.stringify(values.program)}`
      : "";
  return `the night as a picture: sheepdog report${which} --since 12h`;
}

/** `status --fleet`: the leases on the remotes, one line each (or one JSON document). */
async function fleet(values: { json?: boolean; wide?: boolean; program?: string; all?: boolean }) {
  if (values.program !== undefined || values.all)
    throw new UsageError(
      "--fleet reads every program under $SHEEPDOG_HOME: it takes no --program or --all",
    );
  const { readFleet } = await import("../lease/fleet.js");
  const now = Date.now();
  const f = await readFleet(now);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(f)}\n`);
    return f.errors.length > 0 ? EXIT.failed : EXIT.ok;
  }
  const rows = f.leases.map((l) => [
    l.program,
    l.hostname ?? "(not a lease)",
    l.epoch === null ? "-" : String(l.epoch),
    l.renewed_at ? localTime(Date.parse(l.renewed_at)) : "-",
    l.age_s === null ? "-" : `${formatDuration(l.age_s * 1000)} ago`,
    l.expired === null ? "unreadable" : l.expired ? "EXPIRED: may be taken over" : "fresh",
    l.ref,
  ]);
  const header = ["PROGRAM", "HOST", "EPOCH", "RENEWED", "AGE", "STATE", "REF"];
  if (rows.length > 0)
    process.stdout.write(`${alignRows([header, ...rows], outputWidth(values.wide))}\n`);
  else if (f.errors.length === 0)
    process.stdout.write(
      "no leases: no program under $SHEEPDOG_HOME names a lease, or none is held yet\n",
    );
  for (const e of f.errors)
    process.stdout.write(`${e.program}: cannot read ${e.remote}: ${e.error}\n`);
  return f.errors.length > 0 ? EXIT.failed : EXIT.ok;
}

/** The LEASE cell: held here (and the epoch), whose it is, or why it is not known. */
function leaseText(f: Facts, now: number): string {
  const l = f.lease;
  if (!l) return "-";
  if (l.state === "held") return `held here (epoch ${l.epoch})`;
  if (l.state === "unreachable")
    return `remote unreachable${l.was_held ? `, held ${ago(now, l.holder?.renewed_at)}` : ""}`;
  if (l.state === "unreadable") return "ref unreadable";
  return l.holder ? `${l.holder.hostname} (epoch ${l.holder.epoch})` : "elsewhere";
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("status", argv);
  if (values.fleet) return fleet(values);
  const roots = selectRoots(values.program, values.all);
  const now = Date.now();
  const reports: ProgramReport[] = [];
  const dirs: (string | null)[] = [];
  let code: number = EXIT.ok;
  for (const root of roots) {
    try {
      const program = openProgramAt(root, { lastValid: true });
      const r = await statusOf(program, now);
      // a broken program.json is shown, and the exit code says it (DESIGN §16)
      if (program.configInvalid) code = Math.max(code, EXIT.usage);
      // status shows the merge lock even when no rule needs it yet.
      if (r.facts && !r.facts.merge_lock && program.config.merge_lock) {
        const { readMergeLock } = await import("../merge-lock/lock.js");
        r.facts.merge_lock = await readMergeLock(program.config.merge_lock, {
          root: program.root,
          now,
        });
      }
      if (r.facts) {
        const { pageStatus } = await import("../page/status.js");
        r.facts.pages = pageStatus(program, now);
      }
      reports.push(r);
      dirs.push(program.stateDir);
    } catch (err) {
      if (err instanceof SheepdogError && roots.length === 1 && !values.json) throw err;
      code = Math.max(code, err instanceof SheepdogError ? err.exitCode : EXIT.failed);
      reports.push({
        program: root.split("/").pop() || root,
        root,
        decision: "error",
        reason: (err as Error).message,
        facts: null,
        actions: [],
      });
      dirs.push(null);
    }
  }
  if (values.json) {
    process.stdout.write(jsonReport(iso(now), reports));
    return code;
  }
  if (reports.length === 0) {
    process.stdout.write("no programs found\n");
    return code;
  }
  // The LEASE column only where a program is staged on several hosts.
  const leased = reports.some((r) => r.facts?.lease);
  const header = [
    "PROGRAM",
    "MANAGER",
    "HEARTBEAT",
    "CONTEXT",
    "CLAIM",
    ...(leased ? ["LEASE"] : []),
    "PAUSE",
    "STOOD DOWN",
    "MERGE LOCK",
    "PAGES",
    "LAST TICK",
    "NOW",
  ];
  process.stdout.write(
    `${alignRows([header, ...reports.map((r, i) => row(r, now, dirs[i] ?? null, leased))], outputWidth(values.wide))}\n`,
  );
  for (const r of reports) {
    const skipped = r.facts?.journal_skipped && describeSkipped(r.facts.journal_skipped);
    if (skipped) process.stdout.write(`${r.program}: ${localTimes(skipped)}\n`);
  }
  process.stdout.write(`${reportHint(values)}\n`);
  return code;
}
