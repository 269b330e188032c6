/**
 * The summary cache never reads or writes through a symbolic link inside its folder: a settings file's `cacheDir` is
 * confined to its repository, and a link planted there by a cloned repository must not send summaries of the user's
 * transcripts elsewhere, nor serve entries planted elsewhere.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CACHE_VERSION, cacheKey, SUMMARIES_FOLDER, withCache } from '../../../src/io/model/cache.js';
import type { SummaryRequest } from '../../../src/io/model/types.js';
import { tempDir } from '../../helpers/cli.js';

const REQUEST = { system: 'Summarize.', user: '<conversation_to_summarize>\nuser: hi\n</conversation_to_summarize>' };
const answer = async (request: SummaryRequest) => ({ text: `S(${request.user.length})` });

/** An entry for REQUEST as the cache writes it, holding `text`. */
const entryOf = (text: string): string =>
  JSON.stringify({ version: CACHE_VERSION, key: cacheKey('m', '', REQUEST), text });

describe('the summary cache and symbolic links', () => {
  it('writes nothing through a summaries folder that is a link, and reads nothing planted behind it', async () => {
    const dir = tempDir();
    const outside = tempDir();
    symlinkSync(outside, path.join(dir, SUMMARIES_FOLDER));
    writeFileSync(path.join(outside, `${cacheKey('m', '', REQUEST)}.json`), entryOf('PLANTED'));
    const cache = withCache(answer, { dir, model: 'm' });
    const reply = await cache(REQUEST);
    expect(reply).toEqual({ text: `S(${REQUEST.user.length})` });
    expect(cache.stats()).toEqual({ hits: 0, misses: 1, writeFailures: 1 });
    expect(readdirSync(outside)).toEqual([`${cacheKey('m', '', REQUEST)}.json`]);
  });

  it('takes an entry that is a link for a miss, and replaces the link, not what it points to', async () => {
    const dir = tempDir();
    const outside = tempDir();
    const planted = path.join(outside, 'planted.json');
    writeFileSync(planted, entryOf('PLANTED'));
    mkdirSync(path.join(dir, SUMMARIES_FOLDER));
    symlinkSync(planted, path.join(dir, SUMMARIES_FOLDER, `${cacheKey('m', '', REQUEST)}.json`));
    const cache = withCache(answer, { dir, model: 'm' });
    expect((await cache(REQUEST)).cached).toBeUndefined();
    expect(readdirSync(outside)).toEqual(['planted.json']);
    // The entry is now a file of the cache's own, and the next run reads it.
    expect(await withCache(answer, { dir, model: 'm' })(REQUEST)).toEqual({
      text: `S(${REQUEST.user.length})`,
      cached: true,
    });
  });
});
