// What program.json's manager section must say for its agent (DESIGN §7, §19), checked at load
// so `check` refuses it and a tick never fails on it; and the launch defaults of the agent.
import { AGENT_FACTS, agentKindOf } from "../agent/kinds.js";
import { isInteractiveClaude, runsClaude } from "./claude-argv.js";
import { codexArgv, isOneShotCodex, runsCodex } from "./codex-argv.js";
import type { ProgramConfig } from "./schema.js";

type Manager = ProgramConfig["manager"];

/** Every argv the manager section runs, with the field that holds it. */
function argvs(m: Manager): { field: string; argv: readonly string[]; terminal: boolean }[] {
  const out: { field: string; argv: readonly string[]; terminal: boolean }[] = [];
  if (m.launcher === "command" && m.command)
    out.push({ field: "manager.command", argv: m.command, terminal: false });
  if (m.launcher === "tmux" && m.tmux)
    out.push({ field: "manager.tmux.command", argv: m.tmux.command, terminal: true });
  if (m.launcher === "herdr" && m.herdr && m.herdr.kind === "codex")
    out.push({ field: "manager.herdr.args", argv: ["codex", ...m.herdr.args], terminal: true });
  return out;
}

/** What is wrong with how the manager's agent is started, a line each (empty: nothing). */
export function agentProblems(config: ProgramConfig): string[] {
  const m = config.manager;
  const agent = agentKindOf(config);
  const out: string[] = [];
  for (const { field, argv, terminal } of argvs(m)) {
    const shown = JSON.stringify(argv);
    if (runsCodex(argv)) {
      if (agent !== "codex")
        out.push(
          `manager.agent: expected "codex" for a manager whose ${field} runs codex, got ${JSON.stringify(agent)}: its transcripts, limits and activity are read as Codex writes them`,
        );
      if (!codexArgv(argv).noDaemon)
        out.push(
          `${field}: expected --no-daemon before any subcommand, got ${shown}: without it Codex leaves an app-server daemon running after every manager`,
        );
      if (!terminal && !isOneShotCodex(argv))
        out.push(
          `${field}: expected a command that runs without a terminal, got ${shown}: the Codex TUI needs one; run \`codex --no-daemon exec …\`, or use the tmux or herdr launcher`,
        );
    } else if (runsClaude(argv)) {
      if (agent !== "claude")
        out.push(
          `manager.agent: expected "claude" for a manager whose ${field} runs claude, got ${JSON.stringify(agent)}`,
        );
      if (!terminal && isInteractiveClaude(argv))
        out.push(
          `${field}: expected a command that runs without a terminal, got ${shown}: claude without -p/--print needs one (without it, it answers once and exits, which looks like a crash every time); use the tmux or herdr launcher`,
        );
    }
  }
  return out;
}

/**
 * The agent's launch defaults where program.json leaves them out (`raw` is the file as
 * written): a tmux section with no command runs the agent's default command, a herdr section
 * its kind and args. Claude's are the schema's own defaults already.
 */
export function withAgentDefaults(config: ProgramConfig, raw: unknown): ProgramConfig {
  const agent = agentKindOf(config);
  if (agent === "claude") return config;
  const given = (raw as { manager?: { tmux?: object; herdr?: object } } | null)?.manager ?? {};
  const d = AGENT_FACTS[agent].launch;
  const m = config.manager;
  if (m.tmux && !("command" in (given.tmux ?? {}))) m.tmux.command = [...d.tmux];
  if (m.herdr) {
    const h = given.herdr ?? {};
    if (!("kind" in h)) m.herdr.kind = d.herdr.kind;
    if (!("args" in h)) m.herdr.args = [...d.herdr.args];
  }
  return config;
}
