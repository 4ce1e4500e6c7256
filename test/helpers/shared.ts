import { fileURLToPath } from "node:url";

/** `../shared/` beside the repository: the fixtures and Herdr's schema the tests check against. */
export const SHARED =
  process.env.SHEEPDOG_SHARED ?? fileURLToPath(new URL("../../../shared", import.meta.url));
