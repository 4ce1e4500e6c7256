// `sheepdog status --fleet` (DESIGN §15): every lease on the remotes of the programs under
// $SHEEPDOG_HOME, with its host, epoch and freshness, read from the remote itself (the one view
// that no single host's state folder has). Each remote is asked once, however many programs
// share it; a remote that cannot be reached is said, not skipped.
import { openProgramAt } from "../config/context.js";
import { allProgramRoots } from "../config/resolve.js";
import { must, type RefAt, refMessage } from "../git/ref-cas.js";
import { git } from "../git/run.js";
import { iso } from "../util/time.js";
import { leaseAge, leaseRef, parseLease } from "./lease.js";

const PREFIX = "refs/sheepdog/lease/";

export interface FleetLease {
  program: string;
  ref: string;
  machine_id: string | null;
  hostname: string | null;
  epoch: number | null;
  renewed_at: string | null;
  age_s: number | null;
  /** Not renewed for its ttl + the margin: another host may take it over. */
  expired: boolean | null;
}

export interface Fleet {
  at: string;
  leases: FleetLease[];
  /** Remotes that could not be read, and why. */
  errors: { program: string; remote: string; error: string }[];
}

interface Source {
  at: Omit<RefAt, "ref">;
  marginMs: number;
  /** The programs that name this remote, by their lease ref. */
  names: Map<string, string>;
  first: string;
}

/** The remotes to ask: one per repository and remote, whatever number of programs share it. */
function sources(roots: string[]): Source[] {
  const out = new Map<string, Source>();
  for (const root of roots) {
    let program: ReturnType<typeof openProgramAt>;
    try {
      program = openProgramAt(root, { lastValid: true });
    } catch {
      continue; // status (without --fleet) says what is wrong with it
    }
    const cfg = program.config.lease;
    if (!cfg) continue;
    const at = leaseRef(cfg, program.root, program.name);
    const key = `${at.repo}\n${at.remote}`;
    const src = out.get(key) ?? {
      at: { repo: at.repo, remote: at.remote, what: "lease" },
      marginMs: program.policy.lease?.margin ?? 0,
      names: new Map(),
      first: program.name,
    };
    src.names.set(at.ref, program.name);
    out.set(key, src);
  }
  return [...out.values()];
}

/** Every lease ref on one remote: the standard ones and any a program names elsewhere. */
async function leaseRefs(src: Source): Promise<[string, string][]> {
  const patterns = [`${PREFIX}*`, ...[...src.names.keys()].filter((r) => !r.startsWith(PREFIX))];
  const out = await must(
    git(["ls-remote", src.at.remote ?? ".", ...patterns], { cwd: src.at.repo }),
    `lease: cannot list the leases on ${src.at.remote}`,
  );
  return out
    .split("\n")
    .map((l) => l.split("\t") as [string, string])
    .filter(([sha, ref]) => sha && ref);
}

export async function readFleet(now = Date.now(), roots = allProgramRoots()): Promise<Fleet> {
  const fleet: Fleet = { at: iso(now), leases: [], errors: [] };
  // Programs with clones of their own of one remote see the same leases: each is listed once.
  const seen = new Set<string>();
  for (const src of sources(roots)) {
    try {
      for (const [sha, ref] of await leaseRefs(src)) {
        if (seen.has(`${ref}\n${sha}`)) continue;
        seen.add(`${ref}\n${sha}`);
        const lease = parseLease(await refMessage({ ...src.at, ref }, sha));
        const age = lease ? leaseAge(lease, now) : null;
        fleet.leases.push({
          program: src.names.get(ref) ?? ref.slice(ref.lastIndexOf("/") + 1),
          ref,
          machine_id: lease?.machine_id ?? null,
          hostname: lease?.hostname ?? null,
          epoch: lease?.epoch ?? null,
          renewed_at: lease?.renewed_at ?? null,
          age_s: age === null ? null : Math.round(age / 1000),
          expired: lease && age !== null ? age >= lease.ttl + src.marginMs : null,
        });
      }
    } catch (err) {
      fleet.errors.push({
        program: src.first,
        remote: src.at.remote ?? src.at.repo,
        error: (err as Error).message.split("\n")[0] ?? "failed",
      });
    }
  }
  fleet.leases.sort((a, b) => a.program.localeCompare(b.program) || a.ref.localeCompare(b.ref));
  return fleet;
}
