// The statusline's own entry, bundled whole as CommonJS (dist/hot/statusline.cjs): it runs on
// every update of every agent on the host, and CommonJS starts without Node's ESM loader.
import { run } from "./commands/statusline.js";
import { finish } from "./run-command.js";

process.title = "sheepdog statusline";
finish(run(process.argv.slice(process.argv.indexOf("statusline") + 1)));
