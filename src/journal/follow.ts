import { closeSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { openRegular } from "../util/fs.js";
import { JOURNAL, JOURNAL_READ_MAX, parseJournalText, readEvents, rotatedName } from "./journal.js";
import { type ReplayedState, replay, STATE_EVENT_TYPES } from "./replay.js";

/**
 * The replayed state of a journal that a long wait looks at again and again (`sheepdog wait`,
 * woken by every save): the whole journal (up to two 10 MB files) is read once, then only what
 * was appended since. A new file (rotation) or a shorter one is read whole again. Replaying a
 * suffix twice gives the same state (each pair is latest-wins), so a line appended between the
 * stat and the whole read is harmless when it is read again. The rotated file is watched too: a
 * writer that opened the journal just before it was rotated appends there.
 */
export function followReplay(stateDir: string): () => ReplayedState {
  const path = join(stateDir, JOURNAL);
  const previous = join(stateDir, rotatedName(1));
  let state: ReplayedState | null = null;
  let ino = -1;
  let offset = 0;
  let rotated = "";
  const statOf = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return null;
    }
  };
  return () => {
    const st = statOf(path);
    const prev = statOf(previous);
    const prevMark = prev ? `${prev.ino}:${prev.size}` : "";
    // (a suffix too large to read at once is read as a whole journal is: from its end)
    const reread = !st || st.size < offset || st.size - offset > JOURNAL_READ_MAX;
    if (state === null || reread || st.ino !== ino || prevMark !== rotated) {
      state = replay(readEvents(stateDir, STATE_EVENT_TYPES));
      ino = st?.ino ?? -1;
      offset = st?.size ?? 0;
      rotated = prevMark;
      return state;
    }
    if (st.size === offset) return state;
    const buf = Buffer.alloc(st.size - offset);
    const fd = openRegular(path, { noFollow: true });
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, offset);
    } finally {
      closeSync(fd);
    }
    // Whole lines only: a line being written is read next time, whole.
    const end = buf.subarray(0, n).lastIndexOf(0x0a) + 1;
    if (end === 0) return state;
    const text = buf.subarray(0, end).toString("utf8");
    state = replay(parseJournalText(text, { types: STATE_EVENT_TYPES }).events, state);
    offset += end;
    return state;
  };
}
