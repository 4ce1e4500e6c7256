import { spawn } from "node:child_process";

/** The desktop's "open this file" command: `open` on macOS, `xdg-open` elsewhere. */
export function openerFor(platform: NodeJS.Platform = process.platform): string {
  return platform === "darwin" ? "open" : "xdg-open";
}

/**
 * Hands a file to the desktop's opener, with an argv (no shell) and detached: the browser it
 * starts must outlive this command. Resolves null when it started, else why it could not.
 */
export function openFile(path: string, opener = openerFor()): Promise<string | null> {
  return new Promise((done) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(opener, [path], { detached: true, stdio: "ignore" });
    } catch (err) {
      done((err as Error).message);
      return;
    }
    child.once("spawn", () => {
      child.unref();
      done(null);
    });
    child.once("error", (err: NodeJS.ErrnoException) =>
      done(err.code === "ENOENT" ? `${opener} is not installed here` : err.message),
    );
  });
}
