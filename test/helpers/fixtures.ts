import { fileURLToPath } from "node:url";

/**
 * `test/fixtures/`: Claude Code-shaped transcripts and statusline inputs, and Herdr's published
 * API schema. They live in the repository so a clone with nothing beside it passes its own tests.
 */
export const FIXTURES = fileURLToPath(new URL("../fixtures", import.meta.url));
