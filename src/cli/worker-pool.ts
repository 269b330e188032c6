import { Worker } from 'node:worker_threads';
import { failedRecord } from './report.js';
import type { FromWorker, Job, JobResult, WorkerInit } from './worker.js';

// The worker threads of a batch: a fixed pool, started one after another, each taking jobs as it frees up.

/** The worker's module: beside this one when built (the bundle's `worker.js` entry in dist/bin, or dist/cli/worker.js). */
const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * Whether a batch may start worker threads: only when built. Run from its TypeScript source (the unit tests, which
 * build nothing), a worker would load dist/, another build than the code under test, so the work stays in this
 * thread; the built command's workers are tested end to end.
 */
export const WORKERS_AVAILABLE = !import.meta.url.endsWith('.ts');

/** Jobs a worker holds at once: one running, one waiting, so it never idles between files. */
export const PER_WORKER = 2;

/** A job that went to a worker and is not back yet. */
interface Pending {
  readonly job: Job;
  readonly resolve: (result: JobResult) => void;
  readonly reject: (error: Error) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  ready: boolean;
  readonly running: Map<number, Pending>;
}

/** A fixed set of worker threads, each loading the tokenizer once and taking jobs as it frees up. */
export class WorkerPool {
  private readonly workers: PoolWorker[] = [];
  private readonly queue: Pending[] = [];
  private respawns = 0;
  /** How many of the pool's first workers have been started. */
  private started = 1;
  private fatal: Error | null = null;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly init: WorkerInit,
    private readonly target: number,
  ) {
    // One at a time: a worker loading its modules opens dozens of files at once, and several together can pass a low
    // open-file limit (`ulimit -n 64`). The next starts as soon as the previous has its modules, so the encodings
    // still load side by side.
    this.workers.push(this.spawn());
  }

  /** Runs a job; resolves with its result (a failed record when its worker died), never rejects unless no worker can start. */
  run(job: Job): Promise<JobResult> {
    if (this.fatal !== null) return Promise.reject(this.fatal);
    return new Promise<JobResult>((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }

  private spawn(): PoolWorker {
    const worker = new Worker(WORKER_URL, { workerData: this.init });
    const slot: PoolWorker = { worker, ready: false, running: new Map() };
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'loaded') {
        if (!this.closed && this.fatal === null && this.started < this.size) {
          this.started++;
          this.workers.push(this.spawn());
        }
      } else if (message.type === 'ready') {
        slot.ready = true;
      } else {
        const pending = slot.running.get(message.result.index);
        slot.running.delete(message.result.index);
        pending?.resolve(message.result);
      }
      this.pump();
    });
    const lost = (reason: string): void => {
      if (this.closed || !this.workers.includes(slot)) return;
      this.workers.splice(this.workers.indexOf(slot), 1);
      // A worker takes its jobs in order, so the oldest one it held is the one it died on: that file fails; the
      // ones waiting behind it go back to the queue, so the outcome does not depend on which worker held them.
      const [culprit, ...waiting] = slot.running.values();
      slot.running.clear();
      this.queue.unshift(...waiting);
      if (culprit !== undefined) {
        const record = failedRecord(
          culprit.job.display,
          new Error(`the worker thread stopped: ${reason}`),
          this.target,
        );
        culprit.resolve({
          index: culprit.job.index,
          record,
          line: `swc: ${record.error?.message}`,
          diff: null,
          bytes: null,
        });
      }
      // A worker that cannot start (a low open-file or memory limit) leaves the work to those that did.
      if (!slot.ready && this.workers.length > 0) {
        this.pump();
        return;
      }
      if (!slot.ready || this.respawns >= this.size + 16) {
        // A worker that cannot even start (or keeps dying) will not do better next time: stop the run.
        this.fatal = new Error(`cannot start a worker thread: ${reason}`);
        for (const pending of this.queue.splice(0)) pending.reject(this.fatal);
        for (const other of this.workers) for (const pending of other.running.values()) pending.reject(this.fatal);
        return;
      }
      this.respawns++;
      this.workers.push(this.spawn());
      this.pump();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exited with code ${code}`));
    return slot;
  }

  private pump(): void {
    for (const slot of this.workers) {
      while (slot.ready && slot.running.size < PER_WORKER && this.queue.length > 0) {
        const pending = this.queue.shift() as Pending;
        slot.running.set(pending.job.index, pending);
        slot.worker.postMessage({ type: 'job', job: pending.job });
      }
    }
  }
}
