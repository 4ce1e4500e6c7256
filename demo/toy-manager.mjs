#!/usr/bin/env node
// A toy manager for `sheepdog demo` and the tests: it behaves like a real manager session
// towards sheepdog (claims, saves on a cadence, grows a transcript, hands over) without a model.
//
// Environment (all optional):
//   SHEEPDOG_CLI          the sheepdog CLI to call (default: ../dist/cli.cjs beside this file)
//   TOY_SAVE_EVERY_MS     time between saves (default 700)
//   TOY_TOKENS_PER_SAVE   how much the context grows per save (default 30000)
//   TOY_START_TOKENS      context at the first save (default 20000)
//   TOY_NEVER_CLAIM=1     start, but never claim (a start that never claimed)
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const cli = process.env.SHEEPDOG_CLI || fileURLToPath(new URL("../dist/cli.cjs", import.meta.url));
const root = process.env.SHEEPDOG_PROGRAM || process.cwd();
const every = Number(process.env.TOY_SAVE_EVERY_MS || 700);
const step = Number(process.env.TOY_TOKENS_PER_SAVE || 30000);
let tokens = Number(process.env.TOY_START_TOKENS || 20000);
const prompt = process.argv.slice(2).join(" ");

const log = (msg) => console.log(`${new Date().toISOString()} toy-manager[${process.pid}] ${msg}`);

// The transcript is shaped like Claude Code's, so `save` reads its context size for real.
const dir = join(root, "toy-transcripts");
mkdirSync(dir, { recursive: true });
const transcript = join(dir, `${process.pid}.jsonl`);
const entry = (type, message) =>
  `${JSON.stringify({ type, isSidechain: false, timestamp: new Date().toISOString(), sessionId: `toy-${process.pid}`, message })}\n`;
appendFileSync(transcript, entry("user", { role: "user", content: prompt || "(no prompt)" }));

function sheepdog(...args) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: "utf8" });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

process.on("SIGTERM", () => {
  log("SIGTERM: stopping");
  process.exit(0);
});

log(`started: ${prompt}`);
if (process.env.TOY_NEVER_CLAIM === "1") {
  log("never claiming (as told)");
  setInterval(() => {}, 1 << 30);
} else {
  const claim = sheepdog("claim", "acquire");
  if (claim.code !== 0) {
    log(`claim refused (exit ${claim.code}): ${claim.err}`);
    process.exit(0);
  }
  log("claimed the program");
  let item = 0;
  const tick = () => {
    item++;
    tokens += step;
    appendFileSync(
      transcript,
      entry("assistant", {
        role: "assistant",
        model: "toy",
        content: [{ type: "text", text: `worked on item ${item}` }],
        usage: {
          input_tokens: 5,
          cache_creation_input_tokens: 1000,
          cache_read_input_tokens: tokens - 1005,
          output_tokens: 100,
        },
      }),
    );
    const save = sheepdog("save", "--transcript", transcript, "--progress", `item-${item}`);
    let answer = {};
    try {
      answer = JSON.parse(save.out);
    } catch {
      log(`save printed no JSON (exit ${save.code}): ${save.err}`);
    }
    log(`saved item ${item}: context ${answer.context_tokens ?? "?"} tokens`);
    if (answer.pause) {
      log(`paused until ${answer.pause.until}: stopping`);
      process.exit(0);
    }
    if (answer.hand_over) {
      const note = `hand-over at ${Math.round(answer.context_tokens / 1000)}k tokens after item ${item}`;
      const h = sheepdog(
        "hand-over",
        "--note",
        note,
        "--transcript",
        transcript,
        "--progress",
        `item-${item}`,
      );
      log(h.code === 0 ? `handed over: ${note}` : `hand-over refused (exit ${h.code}): ${h.err}`);
      process.exit(0);
    }
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
