/** Offloading the real transcripts past BIG_FILE and restoring them (the rest: test/cli/offload.test.ts). */
import { describe, it } from '@jest/globals';
import path from 'node:path';
import { isBig, REAL_DATA } from '../helpers/cli.js';
import { expectOffloadRoundTrip, REAL_FILES } from '../helpers/offload-real.js';

describe.each(REAL_FILES.filter((f) => isBig(path.join(REAL_DATA, f))))('offloading %s', (file) => {
  it('writes every result to the store before the transcript, and swc restore gives the original bytes back', async () => {
    await expectOffloadRoundTrip(file);
  });
});
