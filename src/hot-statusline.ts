// The statusline's own entry, bundled whole as CommonJS (dist/hot/statusline.cjs): it runs on
// every update of every agent on the host, and CommonJS starts without Node's ESM loader.
import { run } from "./commands/statusline.js";
import { finish } from "./run-command.js";
import { endIfStdinPending } from "./util/stdin.js";

process.title = "sheepdog statusline";
const done = run(process.argv.slice(process.argv.indexOf("statusline") + 1));
finish(done);
// A read of stdin left pending at its deadline would keep the process for ever: it has answered.
done.then(endIfStdinPending, endIfStdinPending);
