// `sheepdog hook …`'s own entry, bundled whole as CommonJS (dist/hot/hook.cjs) like the
// statusline: Claude Code runs it in the turn's path, so it starts without the ESM loader.
import { run } from "./commands/hook.js";
import { finish } from "./run-command.js";
import { endIfStdinPending } from "./util/stdin.js";

process.title = "sheepdog hook";
const done = run(process.argv.slice(process.argv.indexOf("hook") + 1));
finish(done);
// A read of stdin left pending at its deadline would keep the process for ever: it has answered.
done.then(endIfStdinPending, endIfStdinPending);
