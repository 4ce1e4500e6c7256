import { spawn } from "node:child_process";
import { closeSync, fchmodSync } from "node:fs";
import { join, resolve } from "node:path";
import { RuntimeFailure, UsageError } from "../errors.js";
import { which } from "../install/target.js";
import { launchEnv, managerEnv } from "./env.js";
import { exitText, logLine, MANAGER_LOG, openManagerLog } from "./manager-log.js";
import { transientScope } from "./transient.js";
import { fillPlaceholders, type Launched, type Launcher, startedProcess } from "./types.js";

export { MANAGER_LOG };

/**
 * The `command` launcher (DESIGN §7): the configured argv, placeholders filled, spawned
 * without a shell in its own session (setsid), cwd = the program root, output appended to
 * manager.log, in this process's environment without the page token plus managerEnv. The
 * child is unref'd so it outlives the tick that started it.
 */
export const launcher: Launcher = {
  async start({ program, reason, prompt }): Promise<Launched> {
    const template = program.config.manager.command;
    if (!template || template.length === 0) {
      throw new UsageError(
        `${program.configPath}: manager.command: expected a non-empty array of strings (the argv the command launcher runs)`,
      );
    }
    const vars = { prompt, reason, program: program.name, root: program.root };
    const [file, ...args] = template.map((part) => fillPlaceholders(part, vars)) as [
      string,
      ...string[],
    ];
    const env = { ...launchEnv(program), ...managerEnv(program) }; // never the page token
    // Under systemd, a scope of its own; systemd-run execs the manager, so the pid is its own.
    const scope = await transientScope(program.name, "manager", env);
    if (scope && !which(file.includes("/") ? resolve(program.root, file) : file, env.PATH))
      throw new RuntimeFailure(
        `manager.command ${JSON.stringify(file)}: cannot start: spawn ${file} ENOENT`,
      );
    const log = openManagerLog(program.stateDir);
    fchmodSync(log, 0o600); // an older log may have been made with a wider mode
    const path = join(program.stateDir, MANAGER_LOG);
    try {
      const [exe, ...argv] = scope ? [...scope.prefix, file, ...args] : [file, ...args];
      const child = spawn(exe as string, argv, {
        cwd: program.root,
        detached: true, // setsid: its own session, untouched by the tick's end
        stdio: ["ignore", log, log],
        env,
      });
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      }).catch((err: Error) => {
        logLine(log, `could not start (launcher command): ${err.message}; why: ${reason}`);
        throw new RuntimeFailure(
          `manager.command ${JSON.stringify(file)}: cannot start: ${err.message}`,
        );
      });
      const pid = child.pid as number;
      // The header divides the log by start; the exit status follows it when this process
      // is still there to see the child end (a resident watch; a tick whose child died at once).
      logLine(log, `started pid ${pid} (launcher command): ${reason}`);
      child.once("exit", (code, signal) => logLine(path, exitText(pid, code, signal)));
      child.unref();
      return {
        launcher: "command",
        pid,
        ...startedProcess(pid),
        ...(scope ? { unit: scope.unit } : {}),
      };
    } finally {
      closeSync(log);
    }
  },
  // A command launch has no pane or window: its process is stopped by exact pid.
  async close() {},
  async screen() {
    return null;
  },
};
