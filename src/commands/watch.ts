import { RuntimeFailure } from "../errors.js";

// Resident mode (DESIGN §9) is planned: the same gather → decide → act pass on a schedule and on
// file changes. Until then the installed timer runs `tick`.
export async function run(_argv: string[]): Promise<number> {
  throw new RuntimeFailure(
    "sheepdog watch: resident mode is not available yet; run ticks from a timer: sheepdog install launchd|systemd",
  );
}
