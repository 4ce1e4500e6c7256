// `sheepdog hook …`'s own entry, bundled whole as CommonJS (dist/hot/hook.cjs) like the
// statusline: Claude Code runs it in the turn's path, so it starts without the ESM loader.
import { run } from "./commands/hook.js";
import { finish } from "./run-command.js";

process.title = "sheepdog hook";
finish(run(process.argv.slice(process.argv.indexOf("hook") + 1)));
