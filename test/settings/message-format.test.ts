import { describe, expect, it } from '@jest/globals';
import { MESSAGE_FORMATS } from '../../src/settings/library.js';
import { formatNames } from '../../src/formats/registry.js';

describe('MessageFormat', () => {
  it('names auto and every registered format, nothing else', () => {
    expect([...MESSAGE_FORMATS].sort()).toEqual(['auto', ...formatNames()].sort());
  });
  it('names each format once', () => {
    expect(new Set(MESSAGE_FORMATS).size).toBe(MESSAGE_FORMATS.length);
  });
});
