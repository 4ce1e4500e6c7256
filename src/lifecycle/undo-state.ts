// The shape `reopen`, `resume` and `unpause` share: each ends one replayed state (finished,
// stood down, paused) with one journal event, and says what it ended, or that there was none.
import { openProgram, type ProgramContext } from "../config/context.js";
import { EXIT } from "../errors.js";
import { appendEvent, type JournalEvent, type NewEvent, readEvents } from "../journal/journal.js";
import { type ReplayedState, replay, STATE_EVENT_TYPES } from "../journal/replay.js";
import { parseCommandArgs } from "../util/args.js";

export interface UndoSpec<H extends JournalEvent> {
  command: "reopen" | "resume" | "unpause";
  /** The state it ends, from the replayed journal; null: nothing to end. */
  held: (state: ReplayedState) => H | null;
  /** The `--json` key that says whether it was ended (`reopened`, `cleared`, `unpaused`). */
  key: string;
  /** The line for people when there is nothing to end. */
  nothing: (program: string) => string;
  /** The event it journals, from the state it ends. */
  event: (held: H, note: string | undefined) => NewEvent;
  /** What `--json` says the ended state was. */
  was: (held: H) => Record<string, unknown>;
  /** The line for people once it is done. */
  done: (program: string, held: H) => string;
  /** Whether the event goes to the pages hook (it closes the incident it ends, DESIGN §8). */
  pages?: boolean;
}

/**
 * What the command does, without its printing: ends the state it ends, with its one event
 * (`extra` fields added, e.g. `by: "phone"`); null when there was nothing to end. The CLI and a
 * command from the phone both come through here (DESIGN §8: exactly what the CLI does).
 */
export function undoHeld<H extends JournalEvent>(
  spec: Pick<UndoSpec<H>, "held" | "event">,
  program: ProgramContext,
  note: string | undefined,
  extra: { by?: string; incident?: string } = {},
  now = Date.now(),
): { held: H; event: JournalEvent } | null {
  const held = spec.held(replay(readEvents(program.stateDir, STATE_EVENT_TYPES)));
  if (!held) return null;
  const event: NewEvent = { ...spec.event(held, note), ...extra };
  return { held, event: appendEvent(program.stateDir, event, now) };
}

export async function undoState<H extends JournalEvent>(
  spec: UndoSpec<H>,
  argv: string[],
): Promise<number> {
  const { values } = parseCommandArgs(spec.command, argv);
  const note = "note" in values ? (values.note as string | undefined) : undefined;
  const program = openProgram(values.program, { create: true });
  const done = undoHeld(spec, program, note);
  const print = (out: Record<string, unknown>) =>
    process.stdout.write(`${JSON.stringify({ program: program.name, ...out })}\n`);
  if (!done) {
    if (values.json) print({ [spec.key]: false, was: null });
    else process.stdout.write(`${spec.nothing(program.name)}\n`);
    return EXIT.ok;
  }
  const { held, event } = done;
  if (spec.pages) {
    const { afterEvents } = await import("../page/hooks.js");
    await afterEvents(program, [event]);
  }
  if (values.json) print({ [spec.key]: true, was: spec.was(held) });
  else process.stdout.write(`${spec.done(program.name, held)}\n`);
  return EXIT.ok;
}
