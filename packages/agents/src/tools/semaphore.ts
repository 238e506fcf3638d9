/**
 * A counting semaphore whose waiters queue in order and can give up (an aborted signal). `acquire`
 * resolves with a release function, called once; it rejects when the signal aborts before a slot is free.
 */
export class Semaphore {
  private active = 0;
  private readonly waiters: { grant: () => void; signal: AbortSignal }[] = [];

  constructor(readonly limit: number) {}

  /** Slots in use now. */
  get inUse(): number {
    return this.active;
  }

  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(new Error("cancelled while waiting"));
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener("abort", onAbort);
        this.active++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.active--;
          this.next();
        });
      };
      const waiter = { grant, signal };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        reject(new Error("cancelled while waiting"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.active < this.limit) grant();
      else this.waiters.push(waiter);
    });
  }

  private next(): void {
    while (this.active < this.limit && this.waiters.length > 0) this.waiters.shift()?.grant();
  }
}
