/**
 * The summary cache: a second run over the same prompts makes no call; the key tells apart every model, instruction
 * and prompt; a damaged entry is a miss and is replaced; a failure is never kept; the key of the API never reaches a
 * file; the files are private and written whole.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SummaryCallError } from '../../../src/errors.js';
import {
  cacheKey,
  commandIdentity,
  defaultCacheDir,
  endpointIdentity,
  SUMMARIES_FOLDER,
  withCache,
} from '../../../src/io/model/cache.js';
import { createEndpointSummarizer } from '../../../src/io/model/endpoint.js';
import type { SummaryRequest, Summarizer } from '../../../src/io/model/types.js';
import { tempDir } from '../../helpers/cli.js';
import { startOpenAiServer, type OpenAiServer } from '../../helpers/openai-server.js';
import { scaled } from '../../helpers/scale.js';

const KEY = 'sk-cache-test-KEY-7f3a9c';
const REQUEST = { system: 'Summarize.', user: '<conversation_to_summarize>\nuser: hi\n</conversation_to_summarize>' };

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer({ apiKey: KEY });
});
afterAll(async () => {
  await server.close();
});

/** A summarizer that answers from the request and counts its calls. */
function counting(): { summarize: Summarizer; calls: SummaryRequest[] } {
  const calls: SummaryRequest[] = [];
  return {
    calls,
    summarize: async (request) => {
      calls.push(request);
      return { text: `S(${request.system}|${request.user})`, usage: { input: 10, output: 2 } };
    },
  };
}

/** Every file under a folder, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('the summary cache', () => {
  it('answers a second run over the same prompt from disk, with no call to the endpoint', async () => {
    const dir = tempDir();
    server.reset();
    const model = endpointIdentity(`${server.url}/v1`, 'm');
    const endpoint = (): Summarizer =>
      createEndpointSummarizer({ baseUrl: `${server.url}/v1`, model: 'm', apiKey: KEY });
    const first = withCache(endpoint(), { dir, model });
    const fresh = await first(REQUEST);
    expect(fresh.cached).toBeUndefined();
    expect(fresh.usage).toBeDefined();
    expect(first.stats()).toEqual({ hits: 0, misses: 1, writeFailures: 0 });
    // A new run: a new cache object over the same folder.
    const second = withCache(endpoint(), { dir, model });
    const again = await second(REQUEST);
    expect(again).toEqual({ text: fresh.text, cached: true });
    expect(second.stats()).toEqual({ hits: 1, misses: 0, writeFailures: 0 });
    expect(server.requests).toHaveLength(1);
  });

  it('calls once per distinct (model, instruction, prompt), whatever the order and repetition (against a set of what was asked)', async () => {
    const text = fc.constantFrom('a', 'b', 'a ', 'ä', '');
    const call = fc.record({ model: fc.constantFrom('endpoint-1', 'endpoint-2', 'command'), system: text, user: text });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 25 }), async (calls) => {
        const dir = tempDir();
        const byModel = new Map<string, ReturnType<typeof counting>>();
        const seen = new Set<string>();
        for (const c of calls) {
          const fake = byModel.get(c.model) ?? counting();
          byModel.set(c.model, fake);
          const reply = await withCache(fake.summarize, { dir, model: c.model })({ system: c.system, user: c.user });
          const id = JSON.stringify([c.model, c.system, c.user]);
          expect(reply.cached === true).toBe(seen.has(id));
          expect(reply.text).toBe(`S(${c.system}|${c.user})`);
          seen.add(id);
        }
        const made = [...byModel.values()].reduce((n, f) => n + f.calls.length, 0);
        expect(made).toBe(seen.size);
      }),
      { numRuns: scaled(30) },
    );
  });

  it('keeps namespaces apart', async () => {
    const dir = tempDir();
    const fake = counting();
    await withCache(fake.summarize, { dir, model: 'm', namespace: 'one' })(REQUEST);
    await withCache(fake.summarize, { dir, model: 'm', namespace: 'two' })(REQUEST);
    await withCache(fake.summarize, { dir, model: 'm', namespace: 'one' })(REQUEST);
    expect(fake.calls).toHaveLength(2);
  });

  it('names an endpoint by the URL it resolves to, so /v1 and /v1/ share entries, and a command by its text', () => {
    expect(endpointIdentity('http://h/v1', 'm')).toBe(endpointIdentity('http://h/v1/', 'm'));
    expect(endpointIdentity('http://h/v1', 'm')).not.toBe(endpointIdentity('http://h/v1', 'n'));
    expect(endpointIdentity('http://h/v1', 'm')).not.toBe(endpointIdentity('http://other/v1', 'm'));
    expect(commandIdentity('llm -m a')).not.toBe(commandIdentity('llm -m b'));
    expect(cacheKey('m', '', REQUEST)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('treats a damaged entry as a miss and writes a good one over it', async () => {
    const dir = tempDir();
    const fake = counting();
    const file = path.join(dir, SUMMARIES_FOLDER, `${cacheKey('m', '', REQUEST)}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    for (const damaged of [
      '',
      '{"version": "swc-summ',
      'null',
      '[]',
      JSON.stringify({ version: 'old', key: 'x', text: 'stale' }),
    ]) {
      writeFileSync(file, damaged);
      const reply = await withCache(fake.summarize, { dir, model: 'm' })(REQUEST);
      expect(reply.cached).toBeUndefined();
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
        key: cacheKey('m', '', REQUEST),
        text: reply.text,
      });
    }
    expect(fake.calls).toHaveLength(5);
    expect((await withCache(fake.summarize, { dir, model: 'm' })(REQUEST)).cached).toBe(true);
  });

  it('does not take an entry copied from another key', async () => {
    const dir = tempDir();
    const fake = counting();
    await withCache(fake.summarize, { dir, model: 'm' })(REQUEST);
    const other = { ...REQUEST, user: 'another prompt' };
    const folder = path.join(dir, SUMMARIES_FOLDER);
    writeFileSync(
      path.join(folder, `${cacheKey('m', '', other)}.json`),
      readFileSync(path.join(folder, `${cacheKey('m', '', REQUEST)}.json`)),
    );
    expect((await withCache(fake.summarize, { dir, model: 'm' })(other)).cached).toBeUndefined();
    expect(fake.calls).toHaveLength(2);
  });

  it('never keeps a failure: the next run calls again', async () => {
    const dir = tempDir();
    let calls = 0;
    const failing: Summarizer = async () => {
      calls += 1;
      throw new SummaryCallError('model endpoint answered 500');
    };
    const cached = withCache(failing, { dir, model: 'm' });
    await expect(cached(REQUEST)).rejects.toThrow(SummaryCallError);
    await expect(cached(REQUEST)).rejects.toThrow(SummaryCallError);
    expect(calls).toBe(2);
    expect(cached.stats()).toEqual({ hits: 0, misses: 2, writeFailures: 0 });
    const empty = withCache(async () => ({ text: '  ' }), { dir, model: 'm' });
    await empty(REQUEST);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('shares one call between identical calls under way at once', async () => {
    const dir = tempDir();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const slow: Summarizer = async () => {
      calls += 1;
      await gate;
      return { text: 'shared' };
    };
    const cached = withCache(slow, { dir, model: 'm' });
    const a = cached(REQUEST);
    const b = cached(REQUEST);
    release();
    const replies = await Promise.all([a, b]);
    expect(calls).toBe(1);
    expect(replies).toEqual([{ text: 'shared' }, { text: 'shared', cached: true }]);
    expect(cached.stats()).toEqual({ hits: 1, misses: 1, writeFailures: 0 });
  });

  it('still answers when the entry cannot be written, and counts it', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, SUMMARIES_FOLDER), 'a file where the folder should be');
    const fake = counting();
    const cached = withCache(fake.summarize, { dir, model: 'm' });
    expect((await cached(REQUEST)).text).toBe(`S(${REQUEST.system}|${REQUEST.user})`);
    expect(cached.stats()).toEqual({ hits: 0, misses: 1, writeFailures: 1 });
  });

  it('writes private files, whole, with no temporary file left, a CACHEDIR.TAG, and never the API key', async () => {
    const dir = tempDir();
    const summarize = createEndpointSummarizer({ baseUrl: `${server.url}/v1`, model: 'm', apiKey: KEY });
    const cached = withCache(summarize, { dir, model: endpointIdentity(`${server.url}/v1`, 'm') });
    for (let i = 0; i < 5; i++) await cached({ ...REQUEST, user: `prompt ${i}` });
    const files = filesUnder(dir);
    expect(files.filter((f) => f.endsWith('.json'))).toHaveLength(5);
    expect(files.filter((f) => !f.endsWith('.json'))).toEqual([path.join(SUMMARIES_FOLDER, 'CACHEDIR.TAG')]);
    for (const f of files) {
      expect(readFileSync(path.join(dir, f), 'utf8')).not.toContain(KEY);
      expect(statSync(path.join(dir, f)).mode & 0o077).toBe(0);
    }
    expect(statSync(path.join(dir, SUMMARIES_FOLDER)).mode & 0o077).toBe(0);
  });

  it('lives in $XDG_CACHE_HOME/swc when that is absolute, else in ~/.cache/swc', () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/var/cache/me' }, '/home/u')).toBe('/var/cache/me/swc');
    expect(defaultCacheDir({ XDG_CACHE_HOME: 'relative/cache' }, '/home/u')).toBe('/home/u/.cache/swc');
    expect(defaultCacheDir({ XDG_CACHE_HOME: '' }, '/home/u')).toBe('/home/u/.cache/swc');
    expect(defaultCacheDir({}, '/home/u')).toBe('/home/u/.cache/swc');
  });
});
