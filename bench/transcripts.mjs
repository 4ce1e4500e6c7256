// Generates Claude Code-shaped transcripts of a given size for the statusline and save benches:
// assistant turns with usage, tool results mostly small and now and then several MB, some
// sidechain turns, and at the end a known context (143210 tokens) followed by a big tool result.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const WORK = join(dirname(fileURLToPath(import.meta.url)), ".work");
export const SESSION = "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a";
export const PROJECT_CWD = "/Users/ops/loops/catalog";
export const EXPECTED_CONTEXT = 143210;

let uuid = 0;
function entry(type, extra) {
  uuid++;
  return {
    parentUuid: uuid > 1 ? `00000000-0000-4000-8000-${String(uuid - 1).padStart(12, "0")}` : null,
    isSidechain: false,
    userType: "external",
    cwd: PROJECT_CWD,
    sessionId: SESSION,
    version: "2.1.90",
    gitBranch: "main",
    type,
    uuid: `00000000-0000-4000-8000-${String(uuid).padStart(12, "0")}`,
    timestamp: new Date(Date.UTC(2026, 10, 12, 9) + uuid * 1000).toISOString(),
    ...extra,
  };
}

function assistant(tokens, { sidechain = false } = {}) {
  return entry("assistant", {
    isSidechain: sidechain,
    requestId: `req_${uuid}`,
    message: {
      id: `msg_${uuid}`,
      type: "message",
      role: "assistant",
      model: "claude-opus-4-6",
      content: [
        { type: "text", text: "Checking the run directory before the next attempt." },
        { type: "tool_use", id: `toolu_${uuid}`, name: "Bash", input: { command: "ls runs/" } },
      ],
      stop_reason: "tool_use",
      usage: {
        input_tokens: tokens.input,
        cache_creation_input_tokens: tokens.cc,
        cache_read_input_tokens: tokens.cr,
        output_tokens: 180,
        service_tier: "standard",
      },
    },
  });
}

function toolResult(size) {
  const filler = "log line: step ok; ".repeat(Math.ceil(size / 19)).slice(0, size);
  return entry("user", {
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${uuid}`, content: filler }],
    },
  });
}

/** A deterministic pseudo-random sequence, so every run builds the same files. */
function rng(seed) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** The path of a transcript of about `mb` MB inside a bench seat, generating it if absent. */
export function transcriptOfSize(mb) {
  const seat = join(WORK, `seat-${mb}mb`);
  const project = join(seat, "projects", PROJECT_CWD.replace(/[^a-zA-Z0-9]/g, "-"));
  const path = join(project, `${SESSION}.jsonl`);
  if (existsSync(path) && Math.abs(statSync(path).size - mb * 1024 * 1024) < mb * 1024 * 100)
    return { seat, path };
  mkdirSync(project, { recursive: true });
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w");
  const rand = rng(mb);
  const target = mb * 1024 * 1024;
  let size = 0;
  const put = (obj) => {
    const line = `${JSON.stringify(obj)}\n`;
    writeSync(fd, line);
    size += Buffer.byteLength(line);
  };
  uuid = 0;
  put({ type: "summary", summary: "Catalog program manager", leafUuid: "x" });
  put(
    entry("user", { message: { role: "user", content: "Read MANAGER-PROMPT.md and follow it." } }),
  );
  let ctx = 20000;
  const endResult = mb >= 10 ? 2 * 1024 * 1024 : 256 * 1024;
  while (size < target - endResult - 4096) {
    ctx = ctx > 180000 ? 20000 : ctx + Math.floor(rand() * 3000);
    const side = rand() < 0.1;
    put(assistant({ input: 4, cc: 800, cr: ctx }, { sidechain: side }));
    const r = rand();
    put(
      toolResult(
        r < 0.02 ? 1_000_000 + Math.floor(rand() * 4_000_000) : 500 + Math.floor(r * 20000),
      ),
    );
  }
  // The known end: the manager's last turn, then a sidechain turn with a bigger context,
  // then a big tool result (2 MB; 256 KB in small files) as the very last line.
  put(assistant({ input: 5, cc: 2210, cr: 140995 }));
  put(assistant({ input: 1, cc: 1, cr: 190000 }, { sidechain: true }));
  put(toolResult(endResult));
  closeSync(fd);
  renameSync(tmp, path);
  return { seat, path };
}

/** The statusline input for a transcript (the shared fixture's values); without `current_usage`
 * when `fromTranscript`, so the context must come from the transcript's tail. */
export function statuslineInput(path, { fromTranscript = false } = {}) {
  return {
    hook_event_name: "Status",
    session_id: SESSION,
    transcript_path: path,
    cwd: PROJECT_CWD,
    model: { id: "claude-opus-4-6", display_name: "Opus 4.6" },
    workspace: { current_dir: PROJECT_CWD, project_dir: PROJECT_CWD },
    version: "2.1.90",
    output_style: { name: "default" },
    cost: { total_cost_usd: 3.56, total_duration_ms: 1472713, total_api_duration_ms: 772588 },
    context_window: {
      total_input_tokens: 1843210,
      total_output_tokens: 40211,
      context_window_size: 200000,
      ...(fromTranscript
        ? {}
        : {
            current_usage: {
              input_tokens: 5,
              cache_creation_input_tokens: 2210,
              cache_read_input_tokens: 140995,
              output_tokens: 310,
            },
          }),
    },
    exceeds_200k_tokens: false,
    rate_limits: {
      five_hour: { used_percentage: 30.0, resets_at: 1763028000 },
      seven_day: { used_percentage: 81.0, resets_at: 1763460000 },
    },
  };
}
