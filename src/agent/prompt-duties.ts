// What every manager's placeholder prompt says about claiming and saving, whatever its agent:
// one text, so the two placeholders (Claude Code's in commands/init.ts, Codex's in
// agent/codex/init.ts) never tell managers two different protocols.
export const CLAIM_AND_SAVE_DUTIES = `- At start: \`sheepdog claim acquire\` (exit 3 means another manager holds the program: stop).
- After every change of state: \`sheepdog save\`. It answers with JSON; when \`hand_over\` is true,
  finish the step you are on, write down where things stand, and run
  \`sheepdog hand-over --note "why"\`, then stop. When \`pause\` is set, save and stop.
  When the program is staged on more than one host and \`lease.held_here\` is false, this
  host no longer holds it: stop at once (another host's manager takes over).`;
