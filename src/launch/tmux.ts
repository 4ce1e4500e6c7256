// STUB (owned by the launchers work): replace with the real tmux launcher.
import { RuntimeFailure } from "../errors.js";
import type { Launcher } from "./types.js";

export const launcher: Launcher = {
  async start() {
    throw new RuntimeFailure("the tmux launcher is not implemented yet");
  },
  async close() {},
  async screen() {
    return null;
  },
};
