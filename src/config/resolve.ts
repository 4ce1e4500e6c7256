import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../errors.js";
import { expandHome } from "../util/fs.js";
import { CONFIG_FILE } from "./load.js";

/** `$SHEEPDOG_HOME`, default `~/loops`: where bare program names and `--all` look. */
export function sheepdogHome(env = process.env): string {
  return resolve(expandHome(env.SHEEPDOG_HOME || "~/loops"));
}

function looksLikePath(value: string): boolean {
  return value.includes("/") || value.startsWith(".") || value.startsWith("~");
}

/** A `--program` value (a path or a bare name under $SHEEPDOG_HOME) as a program root. */
export function rootOf(value: string, env = process.env): string {
  if (looksLikePath(value)) return resolve(expandHome(value));
  return join(sheepdogHome(env), value);
}

/**
 * The program a command concerns (DESIGN §2): `--program`, else the nearest ancestor of the
 * working directory holding program.json, else `$SHEEPDOG_PROGRAM`.
 */
export function resolveProgramRoot(
  flag: string | undefined,
  cwd = process.cwd(),
  env = process.env,
  opts: { takesAll?: boolean } = {},
): string {
  const fromValue = (value: string, source: string) => {
    const root = rootOf(value, env);
    if (!existsSync(join(root, CONFIG_FILE))) {
      throw new UsageError(`${source} ${JSON.stringify(value)}: no ${CONFIG_FILE} in ${root}`);
    }
    return root;
  };
  if (flag !== undefined) return fromValue(flag, "--program");
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, CONFIG_FILE))) return dir;
    if (dirname(dir) === dir) break;
  }
  if (env.SHEEPDOG_PROGRAM) return fromValue(env.SHEEPDOG_PROGRAM, "$SHEEPDOG_PROGRAM");
  throw new UsageError(noProgramMessage(env, opts.takesAll === true));
}

/** What a command that found no program says: every way to name one, and what there is. */
function noProgramMessage(env: NodeJS.ProcessEnv, takesAll: boolean): string {
  const home = sheepdogHome(env);
  const names = allProgramRoots(env).map((r) => r.slice(home.length + 1));
  const ways = takesAll
    ? "pass --program NAME|PATH or --all (every program), run inside a program's folder, or set $SHEEPDOG_PROGRAM"
    : "pass --program NAME|PATH, run inside a program's folder, or set $SHEEPDOG_PROGRAM";
  const found =
    names.length > 0
      ? `programs under ${home}: ${names.join(", ")}`
      : `no programs under ${home} ($SHEEPDOG_HOME); sheepdog init DIR makes one`;
  return `no program: ${ways}; ${found}`;
}

/** `--all`: every direct subdirectory of $SHEEPDOG_HOME with a program.json, sorted. */
export function allProgramRoots(env = process.env): string[] {
  const home = sheepdogHome(env);
  let names: string[];
  try {
    names = readdirSync(home);
  } catch {
    return [];
  }
  return names
    .sort()
    .map((n) => join(home, n))
    .filter((dir) => {
      try {
        return statSync(join(dir, CONFIG_FILE)).isFile();
      } catch {
        return false;
      }
    });
}
