import type { Ora } from 'ora';
import type { CliIo } from './io.js';

/**
 * Progress of a batch run: an ora spinner with `N/M files` and the current file, on stderr, only when stderr is
 * an interactive terminal. Otherwise (CI logs, pipes, --quiet) nothing animated and nothing extra is written:
 * ora itself would print a static line when disabled, so it is never even loaded then (loading it also probes the
 * terminal's colours, which makes Node warn when NO_COLOR and FORCE_COLOR are both set).
 */
export interface Progress {
  /** Shows how far the run is. */
  update(done: number, total: number, current: string | null): void;
  /** Stops and clears the spinner, restoring the cursor. Safe to call twice. */
  stop(): void;
}

/** Whether a spinner belongs on this stderr: a terminal that can redraw, outside CI, and not silenced. */
export function isSpinnerWanted(io: CliIo, quiet: boolean): boolean {
  if (quiet || io.stderr.isTTY !== true) return false;
  // A pseudo-terminal without a size (columns 0) would make ora clear lines forever.
  if ((io.stderr.columns ?? 0) < 1) return false;
  if (io.env.TERM === 'dumb') return false;
  return io.env.CI === undefined || io.env.CI === '' || io.env.CI === 'false';
}

const NO_PROGRESS: Progress = { update() {}, stop() {} };

/**
 * Creates the progress display for a run.
 * @param io the streams; the spinner writes to stderr only
 * @param enabled from `isSpinnerWanted`
 */
export async function createProgress(io: CliIo, enabled: boolean): Promise<Progress> {
  if (!enabled) return NO_PROGRESS;
  const { default: ora } = await import('ora');
  let spinner: Ora | null = null;
  const columns = (): number => Math.max(io.stderr.columns ?? 80, 20);
  return {
    update(done, total, current) {
      const head = `${done}/${total} files`;
      // Keep to one line: a wrapped spinner line cannot be cleared cleanly.
      const room = columns() - head.length - 6;
      const shown = current?.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?') ?? null;
      const name =
        shown === null || room < 8
          ? ''
          : `  ${shown.length > room ? `…${shown.slice(shown.length - room + 1)}` : shown}`;
      const text = `${head}${name}`;
      if (spinner === null) {
        spinner = ora({
          text,
          stream: io.stderr.terminal ?? (io.stderr as NodeJS.WritableStream),
          isEnabled: true,
          discardStdin: false,
        });
        spinner.start();
      } else {
        spinner.text = text;
      }
    },
    stop() {
      spinner?.stop();
      spinner = null;
    },
  };
}
