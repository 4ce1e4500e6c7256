// What Claude Code 2.1.328 writes, for the bench's toy managers (bench/activity-manager.cjs):
// transcript entries, hook payloads and the statusline input, each made from the real capture in
// test/fixtures/claude-2.1.328/ (its README says how each was made) with this session's ids,
// paths and times put in. Only the sub-agent's own entries have no capture to copy: they are
// the main chain's shapes with `isSidechain: true` and the sub-agent's `agentId`, as 2.1.x
// writes them. CommonJS: a toy manager starts with every restart, and requires this.
"use strict";
const { randomBytes, randomUUID } = require("node:crypto");
const { appendFileSync, mkdirSync, readFileSync, writeFileSync } = require("node:fs");
const { dirname, join, resolve } = require("node:path");

const FIXTURES = resolve(__dirname, "..", "test", "fixtures", "claude-2.1.328");
const cache = new Map();
function entries(file) {
  if (!cache.has(file))
    cache.set(
      file,
      readFileSync(join(FIXTURES, file), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
  return cache.get(file);
}
function one(file, what, pred) {
  const found = entries(file).find(pred);
  if (!found) throw new Error(`${file}: no ${what} in the capture`);
  return found;
}
const json = (file) => JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));
const blocks = (e) => (Array.isArray(e.message?.content) ? e.message.content : []);
const isUse = (name) => (e) =>
  e.type === "assistant" && blocks(e).some((b) => b.type === "tool_use" && b.name === name);

/** The captured entries each shape is made from. */
const T = {
  prompt: one(
    "transcript-tool-turn.jsonl",
    "typed prompt",
    (e) => e.type === "user" && typeof e.message?.content === "string",
  ),
  apiRequest: one("transcript-tool-turn.jsonl", "api-request", (e) => e.type === "api-request"),
  bashUse: one("transcript-bash-open.jsonl", "Bash tool_use", isUse("Bash")),
  toolResult: one("transcript-tool-turn.jsonl", "tool_result", (e) =>
    blocks(e).some((b) => b.type === "tool_result"),
  ),
  endTurn: one(
    "transcript-tool-turn.jsonl",
    "end_turn reply",
    (e) => e.type === "assistant" && e.message?.stop_reason === "end_turn",
  ),
  stopSummary: one(
    "transcript-tool-turn.jsonl",
    "stop_hook_summary",
    (e) => e.subtype === "stop_hook_summary",
  ),
  turnDuration: one(
    "transcript-tool-turn.jsonl",
    "turn_duration",
    (e) => e.subtype === "turn_duration",
  ),
  bgUse: one("transcript-background.jsonl", "background Bash tool_use", isUse("Bash")),
  bgResult: one("transcript-background.jsonl", "background tool_result", (e) =>
    blocks(e).some((b) => b.type === "tool_result"),
  ),
  taskNotification: one(
    "transcript-background.jsonl",
    "task-notification",
    (e) => e.type === "user" && /^<task-notification>/.test(String(e.message?.content)),
  ),
  agentUse: one("transcript-subagent-main.jsonl", "Agent tool_use", isUse("Agent")),
  agentResult: one("transcript-subagent-main.jsonl", "Agent tool_result", (e) =>
    blocks(e).some((b) => b.type === "tool_result"),
  ),
  mode: one("transcript-tool-turn.jsonl", "mode", (e) => e.type === "mode"),
  permissionMode: one(
    "transcript-tool-turn.jsonl",
    "permission-mode",
    (e) => e.type === "permission-mode",
  ),
};
const HOOK = {
  stop: json("hook-stop.json"),
  stopBackground: json("hook-stop-background.json"),
  notificationIdle: json("hook-notification-idle.json"),
  statusline: json("statusline-api-key.json"),
};

const hex = (n) => randomBytes(n).toString("hex");
const now = () => new Date().toISOString();

/**
 * One session of the toy manager: its transcript where Claude Code keeps it
 * (`<seat>/projects/<cwd, each non-alphanumeric character as ->/<session id>.jsonl`), written
 * one entry at a time as the real CLI does, each linked to the one before.
 */
class Session {
  constructor({ seat, cwd }) {
    this.id = randomUUID();
    this.cwd = cwd;
    this.seat = seat;
    this.folder = cwd.replace(/[^a-zA-Z0-9]/g, "-");
    this.path = join(seat, "projects", this.folder, `${this.id}.jsonl`);
    this.promptId = randomUUID();
    this.parent = null;
    mkdirSync(dirname(this.path), { recursive: true });
  }

  /** A captured shape with this session's placeholders, ids and time. */
  fill(template) {
    const text = JSON.stringify(template)
      .replaceAll("{CONFIG_DIR}", this.seat)
      .replaceAll("{CWD_FOLDER}", this.folder)
      .replaceAll("{CWD}", this.cwd)
      .replaceAll(String(template.sessionId ?? template.session_id ?? "\0"), this.id);
    return JSON.parse(text);
  }

  /** A main-chain entry from `template`, changed by `edit`, appended; returns it. */
  add(template, edit = () => {}, { chain = true, path = this.path } = {}) {
    const e = this.fill(template);
    if ("timestamp" in e || chain) e.timestamp = now();
    if (chain) {
      e.uuid = randomUUID();
      e.parentUuid = this.parent;
      this.parent = e.uuid;
    }
    if ("promptId" in e) e.promptId = this.promptId;
    edit(e);
    appendFileSync(path, `${JSON.stringify(e)}\n`);
    return e;
  }

  /** One try of the request now being made (2.1.328 writes one per try, nothing on failure). */
  apiRequest() {
    return this.add(
      T.apiRequest,
      (e) => {
        e.id = randomUUID();
      },
      { chain: false },
    );
  }

  begin(prompt) {
    this.add(T.mode, () => {}, { chain: false });
    this.add(T.permissionMode, () => {}, { chain: false });
    this.prompt(prompt);
  }

  prompt(text) {
    this.promptId = randomUUID();
    const e = this.add(T.prompt, (x) => {
      x.message.content = text;
    });
    this.apiRequest();
    return e;
  }

  /** An assistant entry whose one block is a tool call; returns `{ id, at }`. */
  toolUse(template, name, input) {
    const id = `toolu_${hex(12)}`;
    const e = this.add(template, (x) => {
      x.message.id = `msg_${hex(12)}`;
      x.message.content = [{ type: "tool_use", id, name, input }];
      x.message.stop_reason = "tool_use";
    });
    return { id, at: e.timestamp };
  }

  bash(input) {
    return this.toolUse(T.bashUse, "Bash", input);
  }

  toolResult(id, content, template = T.toolResult, edit = () => {}) {
    return this.add(template, (x) => {
      x.message.content = [{ tool_use_id: id, type: "tool_result", content, is_error: false }];
      x.sourceToolAssistantUUID = x.parentUuid;
      edit(x);
    });
  }

  /** A reply that ends the turn, and the Stop hook's summary and the turn's duration after it. */
  endTurn(text) {
    const reply = this.add(T.endTurn, (x) => {
      x.message.id = `msg_${hex(12)}`;
      x.message.content = [{ type: "text", text }];
    });
    this.add(T.stopSummary);
    this.add(T.turnDuration);
    return reply.timestamp;
  }

  /** `run_in_background` Bash: the call and its "Command running in background" result. */
  background(command, description) {
    const task = `b${hex(4)}`;
    const use = this.toolUse(T.bgUse, "Bash", { command, description, run_in_background: true });
    this.toolResult(
      use.id,
      `Command running in background with ID: ${task}. Output is being written to: /tmp/claude-0/${this.folder}/${this.id}/tasks/${task}.output`,
      T.bgResult,
    );
    this.apiRequest();
    return { task, useId: use.id };
  }

  /** The user entry a finished background task or sub-agent starts a turn with. */
  taskNotification(task, useId, summary) {
    const e = this.add(T.taskNotification, (x) => {
      x.message.content = `<task-notification>\n<task-id>${task}</task-id>\n<tool-use-id>${useId}</tool-use-id>\n<output-file>/tmp/claude-0/${this.folder}/${this.id}/tasks/${task}.output</output-file>\n<status>completed</status>\n<summary>${summary}</summary>\n</task-notification>`;
    });
    this.apiRequest();
    return e;
  }

  /** An async `Agent` call (2.1.328 runs it in the background): the call, its launch result. */
  agent(description, prompt) {
    const agentId = `a${hex(8)}`;
    const use = this.toolUse(T.agentUse, "Agent", {
      description,
      prompt,
      subagent_type: "general-purpose",
    });
    this.toolResult(
      use.id,
      [{ type: "text", text: `Async agent launched successfully.\nagentId: ${agentId}` }],
      T.agentResult,
      (x) => {
        x.toolUseResult = { ...x.toolUseResult, agentId, description, prompt };
      },
    );
    this.apiRequest();
    return { agentId, useId: use.id };
  }

  /** The sub-agent's own transcript, `<session>/subagents/agent-<id>.jsonl`, and a writer. */
  subagent(agentId, prompt) {
    const dir = join(dirname(this.path), this.id, "subagents");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `agent-${agentId}.jsonl`);
    writeFileSync(
      join(dir, `agent-${agentId}.meta.json`),
      `${JSON.stringify({ agentType: "general-purpose" })}\n`,
    );
    let parent = null;
    const side = (template, edit) => {
      const e = this.fill(template);
      e.isSidechain = true;
      e.agentId = agentId;
      e.uuid = randomUUID();
      e.parentUuid = parent;
      e.timestamp = now();
      parent = e.uuid;
      edit(e);
      appendFileSync(path, `${JSON.stringify(e)}\n`);
    };
    side(T.prompt, (x) => {
      x.message.content = prompt;
    });
    let n = 0;
    return {
      path,
      /** One step of its work: a tool call, then its result, in turn. */
      step: () => {
        n++;
        const id = `toolu_${hex(12)}`;
        if (n % 2)
          side(T.bashUse, (x) => {
            x.message.id = `msg_${hex(12)}`;
            x.message.content = [
              { type: "tool_use", id, name: "Bash", input: { command: `make check-${n}` } },
            ];
          });
        else
          side(T.toolResult, (x) => {
            x.message.content = [{ tool_use_id: id, type: "tool_result", content: "ok" }];
          });
      },
    };
  }

  /** A hook's stdin, from the capture, for this session. */
  hookPayload(kind, extra = {}) {
    const t =
      kind === "stop" ? HOOK.stop : kind === "notification" ? HOOK.notificationIdle : HOOK[kind];
    const p = this.fill(t);
    p.transcript_path = this.path;
    p.prompt_id = this.promptId;
    return { ...p, ...extra };
  }

  /** A Stop payload listing a running background shell, as hook-stop-background.json does. */
  stopBackground(task, command, description) {
    const p = this.hookPayload("stopBackground");
    p.background_tasks = [{ id: task, type: "shell", status: "running", description, command }];
    return p;
  }

  /** The statusline input for this session (an API-key session: no rate_limits). */
  statusline() {
    const p = this.fill(HOOK.statusline);
    p.transcript_path = this.path;
    return p;
  }
}

module.exports = { Session, FIXTURES };
