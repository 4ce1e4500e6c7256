/**
 * One program's passes, one at a time: a request while a pass runs is remembered once and
 * runs right after it (requests coalesce; passes of one program never overlap in a watcher).
 */
export class PassQueue {
  private running: Promise<void> | null = null;
  private pending: string | null = null;
  private closed = false;

  constructor(private readonly pass: (why: string) => Promise<void>) {}

  /** Asks for a pass; `why` names the trigger (the latest wins while one is queued). */
  request(why: string): void {
    if (this.closed) return;
    if (this.running) {
      this.pending = why;
      return;
    }
    this.running = this.loop(why);
  }

  private async loop(first: string): Promise<void> {
    let why: string | null = first;
    try {
      while (why !== null && !this.closed) {
        this.pending = null;
        await this.pass(why);
        why = this.pending;
      }
    } finally {
      this.running = null;
    }
  }

  get busy(): boolean {
    return this.running !== null;
  }

  /** No further pass starts; resolves when the one in progress (if any) has finished. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending = null;
    await this.running;
  }
}
