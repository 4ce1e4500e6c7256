import { RuntimeFailure } from "../errors.js";

export async function run(_argv: string[]): Promise<number> {
  throw new RuntimeFailure("sheepdog install: not implemented yet");
}
