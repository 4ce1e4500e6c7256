import type { ProgramContext } from "../config/context.js";
import { readToken } from "../page/ntfy.js";
import { envMs } from "../util/env-ms.js";
import { type ControlTarget, messagesOf, readControlState, subscribeUrl } from "./control-topic.js";
import { deliver, forget, setLive } from "./inbox.js";

// `watch`'s subscription to a program's control topic (DESIGN §8): ntfy's JSON stream
// (`GET /<topic>/json?since=<last id>`, docs/subscribe/api.md: an `open` line, what was stored
// since, then each new message, a `keepalive` every 45 s). A stream that ends, fails or falls
// silent is opened again, since the last id the passes answered, so nothing sent meanwhile is
// missed. Each message read asks for a pass; the pass answers it (answer.ts).

/** No line for this long: the path is dead (ntfy's Android app waits 77 s, HttpUtil.kt). */
function readTimeoutMs(): number {
  return envMs("SHEEPDOG_NTFY_READ_TIMEOUT_MS", 77_000);
}
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/** ntfy's first line of a stream: `{"id":…,"time":…,"event":"open","topic":…}`. */
function isOpenLine(line: string): boolean {
  try {
    return (JSON.parse(line) as { event?: unknown }).event === "open";
  } catch {
    return false;
  }
}

/** One stream, opened again until it is closed. */
class ControlStream {
  private stopped = false;
  private abort: AbortController | null = null;
  private wake: (() => void) | null = null;
  readonly done: Promise<void>;

  constructor(
    private readonly root: string,
    private readonly stateDir: string,
    readonly target: ControlTarget,
    private readonly token: () => string | null,
    private readonly onMessage: () => void,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    let retry = FIRST_RETRY_MS;
    while (!this.stopped) {
      const opened = await this.once().catch(() => false);
      if (this.stopped) break; // a stream that replaced it owns the feed now
      setLive(this.root, false);
      if (opened) retry = FIRST_RETRY_MS;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, retry);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      retry = Math.min(retry * 2, MAX_RETRY_MS);
    }
  }

  /** One connection, read to its end; whether it opened. */
  private async once(): Promise<boolean> {
    const since = readControlState(this.stateDir, this.target).last_id ?? "all";
    const ac = new AbortController();
    this.abort = ac;
    let timer: NodeJS.Timeout | undefined;
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(() => ac.abort(), readTimeoutMs());
    };
    let opened = false;
    try {
      quiet();
      const headers: Record<string, string> = {};
      const token = this.token();
      if (token) headers.Authorization = `Bearer ${token}`;
      const res = await fetch(subscribeUrl(this.target, { since }), { headers, signal: ac.signal });
      if (!res.ok || !res.body) {
        await res.body?.cancel().catch(() => {});
        return false;
      }
      const decoder = new TextDecoder();
      let rest = "";
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        quiet();
        rest += decoder.decode(chunk, { stream: true });
        const lines = rest.split("\n");
        rest = lines.pop() ?? "";
        if (rest.length > 1 << 16) return opened; // no line ever that long: not ntfy
        for (const line of lines) {
          if (this.stopped) return opened;
          if (!opened && isOpenLine(line)) {
            opened = true;
            setLive(this.root, true);
          }
          const got = messagesOf([line]);
          for (const m of got) deliver(this.root, m);
          if (got.length > 0) this.onMessage();
        }
      }
      return opened;
    } finally {
      clearTimeout(timer);
      this.abort = null;
    }
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    return this.done;
  }
}

/**
 * A program's control-topic stream while `watch` watches it: opened when its config names a
 * control topic, moved when that changes, closed with the program's watch.
 */
export class ControlFeed {
  private stream: ControlStream | null = null;

  constructor(
    private readonly root: string,
    private readonly onMessage: () => void,
  ) {}

  /** Follows the program's current config (null: it does not load; the stream stays as it is). */
  follow(program: ProgramContext | null): void {
    if (!program) return;
    const ntfy = program.config.page?.ntfy;
    const target = ntfy?.control_topic ? { server: ntfy.server, topic: ntfy.control_topic } : null;
    const now = this.stream?.target;
    if (now && target && now.server === target.server && now.topic === target.topic) return;
    const old = this.stream;
    this.stream = null;
    void old?.stop();
    if (!target || !ntfy) {
      if (old) forget(this.root);
      return;
    }
    const token = () => {
      try {
        return readToken(ntfy);
      } catch {
        return null; // a token that cannot be read: the server says no, and the passes poll
      }
    };
    this.stream = new ControlStream(this.root, program.stateDir, target, token, this.onMessage);
  }

  async close(): Promise<void> {
    const s = this.stream;
    this.stream = null;
    if (!s) return;
    await s.stop();
    forget(this.root);
  }
}
