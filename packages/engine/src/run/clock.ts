import type { Clock } from "@icode/workflow-scheduler";

/** `setTimeout` cannot wait longer than this; longer timers are re-armed. */
const MAX_DELAY_MS = 2_147_483_647;

/** The wall clock: event timestamps are milliseconds since the epoch, timers are real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, callback) {
    let handle: NodeJS.Timeout;
    const due = Date.now() + ms;
    const arm = (delay: number) => {
      handle = setTimeout(() => {
        const left = due - Date.now();
        if (left > 0) arm(Math.min(left, MAX_DELAY_MS));
        else callback();
      }, delay);
    };
    arm(Math.min(Math.max(ms, 0), MAX_DELAY_MS));
    return { cancel: () => clearTimeout(handle) };
  },
};
