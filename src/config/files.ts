/** A program's folder holds these two (DESIGN §2): what `init` writes, what doctor checks. */
export const CONFIG_FILE = "program.json";
/** The manager's prompt the default `manager.prompt` names (`{root}/MANAGER-PROMPT.md`). */
export const PROMPT_FILE = "MANAGER-PROMPT.md";
