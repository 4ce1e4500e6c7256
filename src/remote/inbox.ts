import type { ControlMessage } from "./control-topic.js";

// Between `watch`'s stream of a control topic (stream.ts) and the pass that answers it
// (answer.ts), in one process: the stream drops what it reads here and asks for a pass; the
// pass takes it under the tick lock. While no stream is live the pass polls instead, so a
// message that came while the stream was down is read from the server, since the last id.

interface Feed {
  live: boolean;
  messages: ControlMessage[];
}

const feeds = new Map<string, Feed>();

function feedOf(root: string): Feed {
  let f = feeds.get(root);
  if (!f) {
    f = { live: false, messages: [] };
    feeds.set(root, f);
  }
  return f;
}

/** The stream of `root`'s control topic is reading (its `open` line came) or not. */
export function setLive(root: string, live: boolean): void {
  feedOf(root).live = live;
}

export function deliver(root: string, m: ControlMessage): void {
  const f = feedOf(root);
  if (!f.messages.some((x) => x.id === m.id)) f.messages.push(m);
}

/**
 * What the stream read since the last pass, or null when no stream is live (the pass polls;
 * what the feed held is read again from the server, which still has it).
 */
export function takeStreamed(root: string): ControlMessage[] | null {
  const f = feeds.get(root);
  if (!f) return null;
  const taken = f.messages;
  f.messages = [];
  return f.live ? taken : null;
}

export function forget(root: string): void {
  feeds.delete(root);
}
