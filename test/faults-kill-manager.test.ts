// Kill -9 at every step (issue 14) for the manager's own commands (save, hand-over, claim acquire and release): each is SIGKILLed at
// its named steps and after random delays, then the invariants hold and the ticks converge to
// one healthy manager (test/helpers/kill-rounds.ts; SHEEPDOG_FAULT_ROUNDS, SHEEPDOG_FAULT_SEED).
// The commands are spread over three files so their rounds run side by side.
import { killSuite } from "./helpers/kill-rounds.js";

killSuite(["save", "hand-over", "claim acquire", "claim release"]);
