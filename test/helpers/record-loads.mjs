/**
 * `node --import ./record-loads.mjs …` with SWC_RECORD_LOADS=<file>: appends the URL of every ES module the process
 * loads to that file, one a line (a module `load` hook, registered from the main thread only: the hooks run in a
 * thread of their own, which imports this file again).
 */
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) register(import.meta.url);

export async function load(url, context, nextLoad) {
  const file = process.env.SWC_RECORD_LOADS;
  if (file !== undefined && file !== '') appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
