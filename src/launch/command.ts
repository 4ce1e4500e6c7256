import { spawn } from "node:child_process";
import { closeSync, fchmodSync, openSync } from "node:fs";
import { join, resolve } from "node:path";
import { RuntimeFailure, UsageError } from "../errors.js";
import { which } from "../install/target.js";
import { launchEnv, managerEnv } from "./env.js";
import { transientScope } from "./transient.js";
import { fillPlaceholders, type Launched, type Launcher, startedProcess } from "./types.js";

export const MANAGER_LOG = "manager.log";

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
    const log = openSync(join(program.stateDir, MANAGER_LOG), "a", 0o600);
    fchmodSync(log, 0o600); // an older log may have been made with a wider mode
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
        throw new RuntimeFailure(
          `manager.command ${JSON.stringify(file)}: cannot start: ${err.message}`,
        );
      });
      child.unref();
      const pid = child.pid as number;
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
