import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { programArg, testPage } from "../page/compose.js";
import { publish, readToken, scrub } from "../page/ntfy.js";
import { parseCommandArgs } from "../util/args.js";

/** `sheepdog page --test`: sends one low-priority page and reports the server's answer. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("page", argv);
  if (!values.test) throw new UsageError("sheepdog page: expected --test");
  const program = openProgram(values.program);
  const ntfy = program.config.page?.ntfy;
  if (!ntfy) {
    throw new UsageError(
      `${program.configPath}: page.ntfy: not configured; add {"page": {"ntfy": {"topic": "..."}}} to page ${program.name}`,
    );
  }
  const token = (() => {
    try {
      return readToken(ntfy);
    } catch (err) {
      throw new UsageError(`${program.configPath}: ${(err as Error).message}`);
    }
  })();
  const page = testPage({ name: program.name, arg: programArg(program.name, program.root) });
  const report = { program: program.name, server: ntfy.server, topic: ntfy.topic };
  try {
    const answer = await publish(ntfy, page, token);
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ ...report, ok: true, status: answer.status, id: answer.id, title: page.title })}\n`,
      );
    } else {
      const rows = [
        `sent     ${page.title}`,
        `server   ${ntfy.server}`,
        `topic    ${ntfy.topic}`,
        `answer   ${answer.status}, message id ${answer.id ?? "(none given)"}`,
      ];
      process.stdout.write(`${rows.join("\n")}\n`);
    }
    return EXIT.ok;
  } catch (err) {
    const error = scrub((err as Error).message, token);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...report, ok: false, error })}\n`);
    }
    process.stderr.write(`sheepdog page: test page not delivered: ${error}\n`);
    return EXIT.failed;
  }
}
