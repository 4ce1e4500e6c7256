// Doctor's checks of a Codex manager (DESIGN §19): the version its command runs against the
// tested ones, sheepdog's Stop hook defined and trusted (Codex skips an untrusted hook
// silently), the permissions that let it run `sheepdog` with no person, and the program
// root's trust (else its "Trust this folder?" dialog holds every start).
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { PROFILE, profilePath, STOP_HOOK_COMMAND } from "../agent/codex/profile.js";
import { type CodexSettings, codexSettings } from "../agent/codex/settings.js";
import {
  CODEX_CHECK_A_VERSION,
  CODEX_TESTED_VERSIONS,
  codexVersionStanding,
  parseCodexVersion,
} from "../agent/codex/versions.js";
import { executableOf } from "../config/claude-argv.js";
import { runsCodex } from "../config/codex-argv.js";
import type { Program } from "../config/load.js";
import { unitPath, which } from "../install/target.js";
import { seatOf } from "../usage/seat.js";
import { bad, type Check, nativeScheduler, ok } from "./check.js";

/** The argv a Codex program's launcher runs (its executable first). */
export function codexCommand(program: Program): readonly string[] | null {
  const m = program.config.manager;
  if (m.launcher === "command") return m.command ?? null;
  if (m.launcher === "tmux") return m.tmux?.command ?? ["codex", "--no-daemon", "{prompt}"];
  const h = m.herdr;
  return ["codex", ...(h?.args ?? ["--no-daemon"])];
}

const INIT_FIX = (root: string) =>
  `run sheepdog init --agent codex in a scratch folder with the manager's CODEX_HOME (it writes the profile), or add the profile's entries by hand, and start the manager with --profile ${PROFILE} (the program's ${root}/program.json command)`;

function versionCheck(program: Program, argv: readonly string[]): Check {
  const exe = executableOf(argv);
  const found =
    which(exe, unitPath({ homebrew: nativeScheduler() === "launchd" })) ??
    which(exe, process.env.PATH);
  if (!found)
    return bad(
      program.name,
      "codex-version",
      "fail",
      `${exe} is not on PATH`,
      `install @openai/codex (tested: ${CODEX_TESTED_VERSIONS.join(", ")})`,
    );
  const r = spawnSync(found, ["--version"], { encoding: "utf8", timeout: 15_000 });
  const version = parseCodexVersion(`${r.stdout ?? ""}${r.stderr ?? ""}`);
  if (!version)
    return bad(
      program.name,
      "codex-version",
      "warn",
      `${found} --version did not name a version (${(r.stdout || r.stderr || r.error?.message || "").trim().split("\n")[0]})`,
      `check that ${found} is the Codex CLI`,
    );
  const tested = CODEX_TESTED_VERSIONS.join(", ");
  const standing = codexVersionStanding(version);
  if (standing === "tested")
    return ok(program.name, "codex-version", `${found}: codex-cli ${version} (a tested version)`);
  if (standing === "older")
    return bad(
      program.name,
      "codex-version",
      "fail",
      `${found}: codex-cli ${version} is older than the oldest tested (${tested}): the rollout fields sheepdog reads may be missing`,
      `npm install -g @openai/codex@${CODEX_TESTED_VERSIONS.at(-1)}`,
    );
  return bad(
    program.name,
    "codex-version",
    "warn",
    `${found}: codex-cli ${version} is not a tested version (${tested}; the newest is ${CODEX_TESTED_VERSIONS.at(-1)})`,
    `it may work; to check it: ${CODEX_CHECK_A_VERSION}`,
  );
}

function hookCheck(program: Program, s: CodexSettings, seat: string): Check {
  const h = s.stopHook;
  if (!h)
    return bad(
      program.name,
      "codex-hooks",
      "warn",
      `no Stop hook runs ${STOP_HOOK_COMMAND} in ${profilePath(seat)} or ${seat}/hooks.json: an ended turn is read from the rollout alone, and the holder's own rollout is found by its folder and time`,
      INIT_FIX(program.root),
    );
  if (!h.trusted)
    return bad(
      program.name,
      "codex-hooks",
      "fail",
      `${h.file}: the Stop hook ${STOP_HOOK_COMMAND} is not trusted in ${seat}: Codex skips it silently (or holds an interactive start at "Hooks need review")`,
      `trust it once in codex (/hooks, or "Trust all" at the review), or ${INIT_FIX(program.root)}`,
    );
  return ok(
    program.name,
    "codex-hooks",
    `${h.file}: the Stop hook ${STOP_HOOK_COMMAND} is trusted`,
  );
}

function permissionCheck(program: Program, s: CodexSettings): Check {
  const a = s.approval;
  const sb = s.sandbox;
  const said = `approval_policy ${a.value ?? "(unset)"} (${a.from}), sandbox_mode ${sb.value ?? "(unset)"} (${sb.from})`;
  if (a.value !== "never")
    return bad(
      program.name,
      "codex-permissions",
      "fail",
      `${said}: the manager would wait for a person to approve its sheepdog commands`,
      `set approval_policy = "never" in the profile the manager runs with (${INIT_FIX(program.root)})`,
    );
  if (sb.value === "danger-full-access") return ok(program.name, "codex-permissions", said);
  if (sb.value === "workspace-write")
    return bad(
      program.name,
      "codex-permissions",
      "warn",
      `${said}: sheepdog writes outside the workspace (its state under $SHEEPDOG_STATE_DIR, ~/.local/state/sheepdog) and a ledger pushes over the network, which this sandbox refuses unless its writable_roots and network_access allow them`,
      `set sandbox_mode = "danger-full-access" in the profile, or allow those in [sandbox_workspace_write]`,
    );
  return bad(
    program.name,
    "codex-permissions",
    "fail",
    `${said}: a read-only sandbox cannot run sheepdog save`,
    `set sandbox_mode = "danger-full-access" in the profile the manager runs with`,
  );
}

function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function trustCheck(
  program: Program,
  s: CodexSettings,
  launcher: "tmux" | "herdr" | "command",
): Check {
  const root = realPath(program.root);
  for (let dir = root; ; dir = dirname(dir)) {
    if (s.trusted.includes(dir))
      return ok(
        program.name,
        "codex-trust",
        `${dir} is trusted (${s.files.map((f) => f.path).join(", ")})`,
      );
    if (dir === dirname(dir)) break;
  }
  const where = `${root} is not trusted in ${s.files.map((f) => f.path).join(" or ")}`;
  if (launcher === "command")
    return ok(program.name, "codex-trust", `${where} (codex exec asks nothing)`);
  if (program.config.manager[launcher]?.accept_trust_dialog === true)
    return ok(
      program.name,
      "codex-trust",
      `${where}: Codex asks "Trust this folder?" at every start; manager.${launcher}.accept_trust_dialog answers it`,
    );
  return bad(
    program.name,
    "codex-trust",
    "warn",
    `${where}: Codex asks "Trust this folder?" at every start there, and the start is held at it`,
    INIT_FIX(program.root),
  );
}

/** Every Codex check of a program whose manager.agent is codex. */
export function codexChecks(program: Program): Check[] {
  const argv = codexCommand(program);
  if (!argv || !runsCodex(argv))
    return [
      ok(
        program.name,
        "codex",
        `the manager's command does not run codex itself (${JSON.stringify(argv)}): nothing of Codex's to check`,
      ),
    ];
  const seat = seatOf(program.config);
  const s = codexSettings(seat, argv);
  return [
    versionCheck(program, argv),
    hookCheck(program, s, seat),
    permissionCheck(program, s),
    trustCheck(program, s, program.config.manager.launcher),
  ];
}
