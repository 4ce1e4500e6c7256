// `npm run bench`: every speed benchmark in one go. The statusline and save benches need the peer
// tools (npm install --prefix bench/peers) and generate 1/50/500 MB transcripts in bench/.work/.
// The slower ones that take minutes run by name: `npm run bench -- recovery activity` (kill and
// hand-over recovery; idle, wedged and busy-but-quiet managers), or report, transcripts.
import { spawnSync } from "node:child_process";

const benches =
  process.argv.length > 2 ? process.argv.slice(2) : ["startup", "tick", "statusline", "save"];
for (const name of benches) {
  console.log(`\n=== bench/${name}.mjs`);
  const r = spawnSync(process.execPath, [`bench/${name}.mjs`], { stdio: "inherit" });
  if (r.status !== 0) process.exitCode = 1;
}
