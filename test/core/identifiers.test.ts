import { describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  identifiersIn,
  retentionFailure,
  retentionOf,
  type Identifier,
  type IdentifierKind,
} from '../../src/core/identifiers/index.js';
import { textContent } from '../../src/core/render.js';
import { compactMessages } from '../../src/library/index.js';
import type { Message } from '../../src/core/types.js';
import { scaled } from '../helpers/scale.js';

const values = (text: string, kind?: IdentifierKind): string[] =>
  identifiersIn(text)
    .filter((id) => kind === undefined || id.kind === kind)
    .map((id) => id.value);
const one = (kind: IdentifierKind, value: string): Identifier => ({ kind, value });

describe('file paths', () => {
  it.each([
    ['edit src/auth/login.ts now', 'src/auth/login.ts'],
    ['see /etc/hosts', '/etc/hosts'],
    ['in ./scripts/run.sh', 'scripts/run.sh'],
    ['../lib/util.js', '../lib/util.js'],
    ['~/.bashrc', '~/.bashrc'],
    ['package.json', 'package.json'],
    ['README.md.', 'README.md'],
    ['src/core/compact.ts:42', 'src/core/compact.ts'],
    ['src/core/compact.ts:42:7: error', 'src/core/compact.ts'],
    ['C:\\Users\\me\\notes.txt', 'C:\\Users\\me\\notes.txt'],
    ['{"path": "c:\\\\Users\\\\me\\\\a.txt"}', 'C:\\Users\\me\\a.txt'],
    ['src/core', 'src/core'],
    ['foo/bar/', 'foo/bar'],
    ['/tmp', '/tmp'],
    ['--out=dist/index.js', 'dist/index.js'],
    ['**src/a.ts**', 'src/a.ts'],
    ['--- a/src/marshmallow/fields.py', 'src/marshmallow/fields.py'],
    ['.gitignore', '.gitignore'],
    ['Makefile', 'Makefile'],
    ['(see the Makefile).', 'Makefile'],
    ["open('data/x.csv')", 'data/x.csv'],
    ['{"file_path":"src/a.ts","old":"x"}', 'src/a.ts'],
  ])('%s names the path %s', (text, value) => {
    expect(values(text, 'path')).toEqual([value]);
  });

  it.each([
    'and/or',
    'input/output',
    'TCP/IP',
    'w/',
    '12/05/2024',
    '1/2',
    'application/json',
    '/clear',
    '/compact',
    'console.log',
    'res.json',
    'process.env',
    'state.todos.map',
    'Node.js',
    'e.g.',
    'i.e.',
    'v1.2.3',
    'example.com',
    'os.path',
    '@types/node',
    'src/**/*.ts',
    '$HOME/x',
    '//',
    '3.14',
    // Times of day, as airline agents write them.
    'at 10:30 a.m. or 2 p.m.',
    'at 9 A.M.',
  ])('%s is no path', (text) => {
    expect(values(text)).toEqual([]);
  });

  it('reads the path out of a numbered line of a Claude Code Read result (`2→...`)', () => {
    expect(values('     2→.claude/bin')).toEqual(['.claude/bin']);
  });
});

describe('URLs', () => {
  it.each([
    ['read https://Example.COM/Docs/a?b=1#c.', 'https://example.com/Docs/a?b=1#c'],
    ['(see https://en.wikipedia.org/wiki/Foo_(bar)).', 'https://en.wikipedia.org/wiki/Foo_(bar)'],
    ['url=https://a.example/x,', 'https://a.example/x'],
    ['https://a.example/docs/', 'https://a.example/docs'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['"https://a.example/x\\nnext"', 'https://a.example/x'],
  ])('%s names %s', (text, value) => {
    expect(values(text, 'url')).toEqual([value]);
  });

  it.each(['https://', 'mailto:a@b.example', 'javascript://x', 'foo://bar'])('%s is no URL', (text) => {
    expect(values(text, 'url')).toEqual([]);
  });
});

describe('hashes and UUIDs', () => {
  it.each([
    ['[master 6322cf4] Add', 'hash', '6322cf4'],
    ['commit bfd2593d4b416122e30cdefe0c72d322ef471611', 'hash', 'bfd2593d4b416122e30cdefe0c72d322ef471611'],
    ['id 5C0375B4-57A5-4F26-B12D-D022EE4E51B7', 'uuid', '5c0375b4-57a5-4f26-b12d-d022ee4e51b7'],
  ] as const)('%s names the %s %s', (text, kind, value) => {
    expect(identifiersIn(text)).toEqual([one(kind, value)]);
  });

  it('reads both ends of a range', () => {
    expect(values('git log abc1234..def5678', 'hash')).toEqual(['abc1234', 'def5678']);
  });

  it.each(['1234567', 'deadbeef', 'facade', '1e100000', '0x1f2e3d4c5', 'ABCDEF123', 'abc123'])(
    '%s is no hash',
    (text) => {
      expect(values(text)).toEqual([]);
    },
  );
});

describe('errors', () => {
  it.each([
    ['TypeError: x is undefined', 'TypeError'],
    ['raise json.decoder.JSONDecodeError', 'JSONDecodeError'],
    ['java.lang.NullPointerException', 'NullPointerException'],
    ['Error: ENOENT: no such file', 'ENOENT'],
    ['code ERR_MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND'],
    ['error[E0308]: mismatched types', 'E0308'],
    ['error TS2307: Cannot find module', 'TS2307'],
    ['got HTTP 404 back', 'HTTP 404'],
    ['HTTP/1.1 503 Service Unavailable', 'HTTP 503'],
    ['failed with status code 429', 'HTTP 429'],
    ['404 Not Found', 'HTTP 404'],
    ['(TypeError),', 'TypeError'],
    ['Errno EACCES.', 'EACCES'],
  ])('%s names %s', (text, value) => {
    expect(values(text, 'error')).toEqual([value]);
  });

  it.each([
    'Error',
    'Exception',
    'EVERY',
    'ERROR',
    'ERR_',
    'E123',
    'status 200',
    'HTTP 999',
    'HTTP 200 OK',
    'HTTP/1.1 204',
    'HTTP 301',
    'at 10:30 a.m. and 2 p.m.',
    '404 pages',
    'Errors happen',
  ])('%s is no error', (text) => {
    expect(values(text, 'error')).toEqual([]);
  });
});

describe('symbols in inline code', () => {
  it.each([
    ['call `swcPrepareStep` here', 'swcPrepareStep'],
    ['the `planChain()` function', 'planChain'],
    ['`RubiksCube::Cube`', 'RubiksCube::Cube'],
    ['`datetime.timedelta`', 'datetime.timedelta'],
    ['`MAX_SIZE`', 'MAX_SIZE'],
    ['`Plan`', 'Plan'],
  ])('%s names %s', (text, value) => {
    expect(values(text, 'symbol')).toEqual([value]);
  });

  it.each([
    '`npm`',
    '`true`',
    '`True`',
    '`None`',
    '`JSON`',
    '`npm run build`',
    '```ts\nfoo_bar\n```',
    '``x_y``',
    'no `closing',
    'foo_bar',
  ])('%s is no symbol', (text) => {
    expect(values(text, 'symbol')).toEqual([]);
  });

  it('takes a span that holds an identifier of another kind as that kind', () => {
    expect(identifiersIn('`src/a.ts` and `TypeError`')).toEqual([one('path', 'src/a.ts'), one('error', 'TypeError')]);
  });
});

describe('words end at Unicode quotes, punctuation and invisible characters', () => {
  it.each([
    ['“src/auth/login.ts”'],
    ['‘src/auth/login.ts’'],
    ['«src/auth/login.ts»'],
    ['‹src/auth/login.ts›'],
    ['„src/auth/login.ts“'],
    ['「src/auth/login.ts」'],
    ['『src/auth/login.ts』'],
    ['【src/auth/login.ts】'],
    ['（src/auth/login.ts）'],
    ['see src/auth/login.ts…'],
    ['src/auth/login.ts—then the tests'],
    ['修改 src/auth/login.ts。'],
    ['src/auth/login.ts，然后'],
    ['文件：src/auth/login.ts！'],
    ['x\u3000src/auth/login.ts\u3000y'],
    ['src/auth/login.ts\u200b'],
    ['\u200bsrc/auth/login.ts\u200b'],
    ['\u2060src/auth/login.ts\ufeff'],
    ['\ufeffsrc/auth/login.ts'],
  ])('finds the path in %s', (text) => {
    expect(values(text, 'path')).toEqual(['src/auth/login.ts']);
  });

  it.each([
    ['_src/auth/login.ts_', 'src/auth/login.ts'],
    ['__src/auth/login.ts__', 'src/auth/login.ts'],
    ['*src/auth/login.ts*', 'src/auth/login.ts'],
    ['**src/auth/login.ts**', 'src/auth/login.ts'],
    ['**_src/auth/login.ts_**', 'src/auth/login.ts'],
    ['_src/auth/login.ts_, then', 'src/auth/login.ts'],
    ['_see src/auth/login.ts_', 'src/auth/login.ts'],
    ['~~src/auth/login.ts~~', 'src/auth/login.ts'],
    ['~~dropped src/auth/login.ts~~', 'src/auth/login.ts'],
    ['~~_src/auth/login.ts_~~', 'src/auth/login.ts'],
    ['~~~/notes.md~~', '~/notes.md'],
    ['_src/auth/login.ts._', 'src/auth/login.ts'],
    ['_src/_app.tsx_', 'src/_app.tsx'],
    ['_/etc/hosts_', '/etc/hosts'],
    ['**_/etc/hosts_**', '/etc/hosts'],
    ['_a/_b.ts_', 'a/_b.ts'],
    ['~~/etc/hosts~~', '/etc/hosts'],
    ['_~~/etc/hosts~~_', '/etc/hosts'],
    ['_*_a/b.ts*_', '_a/b.ts'],
    ['_*_a/_b.ts*_', '_a/_b.ts'],
  ])('trims markdown emphasis and strikethrough: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each([
    ['src/__tests__/a.ts', 'src/__tests__/a.ts'],
    ['see src/__tests__', 'src/__tests__'],
    ['__tests__/a.ts', '__tests__/a.ts'],
    ['_config.yml', '_config.yml'],
    ['src/my-file.ts', 'src/my-file.ts'],
    ['an editor’s backup src/a.ts~', 'src/a.ts~'],
  ])('keeps an underscore, tilde or hyphen that is the name’s own: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each([
    ['src/auth/login.ts#L10', 'src/auth/login.ts'],
    ['src/auth/login.ts#L10-L20', 'src/auth/login.ts'],
    ['(src/auth/login.ts#L10)', 'src/auth/login.ts'],
    ['“src/auth/login.ts#L10”', 'src/auth/login.ts'],
    ['README.md#usage', 'README.md'],
    ['C:\\Users\\me\\a.ts#L3', 'C:\\Users\\me\\a.ts'],
    ['C:\\Users\\me\\C#\\Program.cs', 'C:\\Users\\me\\C#\\Program.cs'],
  ])('drops an anchor, which names a place in the file: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it('takes a `#` with nothing after it for part of the name (Emacs’s #notes.txt#)', () => {
    expect(values('edit #notes.txt# later')).toEqual([]);
  });

  it('takes a `#` with a separator after it for part of a folder’s name, not an anchor', () => {
    expect(values('see docs/C#/intro.md')).not.toContain('docs/C');
  });

  it.each([
    ['_https://a.example/x_', 'https://a.example/x'],
    ['~~https://a.example/x~~', 'https://a.example/x'],
    ['“https://a.example/x”', 'https://a.example/x'],
    ['see https://a.example/x。', 'https://a.example/x'],
    ['https://a.example/x\u200b', 'https://a.example/x'],
    ['https://a.example/x_y', 'https://a.example/x_y'],
    ['https://a.example/~me', 'https://a.example/~me'],
    ['https://en.wikipedia.org/wiki/1990–91_season', 'https://en.wikipedia.org/wiki/1990–91_season'],
    ['«https://de.wikipedia.org/wiki/Stra%C3%9Fe»', 'https://de.wikipedia.org/wiki/Stra%C3%9Fe'],
    ['https://ja.wikipedia.org/wiki/東京・大阪', 'https://ja.wikipedia.org/wiki/東京・大阪'],
  ])('keeps what is a URL’s own and trims what wraps it: %s', (text, url) => {
    expect(values(text, 'url')).toEqual([url]);
  });

  /** A path from parts of ASCII and other letters, digits, `_` and `-`, with an extension; as extraction writes it. */
  const letter = fc.constantFrom(...'abcxyzABZ019éü中文яß'.split(''));
  const inner = fc.constantFrom(...'abz09éü中я_-'.split(''));
  const part = fc
    .tuple(fc.constantFrom('', '_'), letter, fc.array(inner, { maxLength: 6 }), letter)
    .map(([lead, first, middle, last]) => `${lead}${first}${middle.join('')}${last}`);
  const pathArb = fc
    .tuple(
      fc.constantFrom('', '/', '~/', '../'),
      fc.array(part, { minLength: 1, maxLength: 3 }),
      part,
      fc.constantFrom('ts', 'py', 'md', 'json', 'rs'),
    )
    .map(([root, dirs, name, ext]) => `${root}${dirs.join('/')}/${name}.${ext}`);
  /** What may follow a path and names a place in it, not another file. */
  const place = fc.constantFrom('', '', '#L10', '#L10-L20', ':12', ':12:5');

  const pairs: ReadonlyArray<readonly [string, string]> = [
    ['“', '”'],
    ['‘', '’'],
    ['«', '»'],
    ['‹', '›'],
    ['„', '“'],
    ['「', '」'],
    ['『', '』'],
    ['【', '】'],
    ['（', '）'],
    ['(', ')'],
    ['"', '"'],
    ['`', '`'],
    ['_', '_'],
    ['*', '*'],
    ['**', '**'],
    ['~~', '~~'],
    ['\u200b', '\u200b'],
    ['\u3000', '\u3000'],
    ['\u00a0', '\u00a0'],
    ['\ufeff', '\u2060'],
  ];
  /**
   * Punctuation that follows what it ends. It goes outside the wrappers: an `_` written after it (`_src/a.ts。_`) is a
   * word of its own, which closes nothing in the path's word.
   */
  const ending = fc.constantFrom('', '…', '—', '。', '、', '，', '：', '！', '.', ',', ';', '?');
  /** One to three wrappers, the first innermost. */
  const wrapper = fc
    .array(fc.constantFrom(...pairs), { minLength: 1, maxLength: 3 })
    .map((layers) => layers.reduce(([l, r], [ol, or]) => [`${ol}${l}`, `${r}${or}`], ['', '']));
  const prose = fc.constantFrom('', 'see', 'then', 'voir', 'siehe', '参见', 'см.', 'l’app', 'don’t');

  it('finds a wrapped path as it finds it between spaces (property)', () => {
    fc.assert(
      fc.property(pathArb, place, wrapper, ending, prose, prose, (p, at, [left, right], end, before, after) => {
        const plain = identifiersIn(` ${p} `);
        expect(plain).toEqual([one('path', p)]);
        expect(identifiersIn(`${before} ${left}${p}${at}${right}${end} ${after}`)).toEqual(plain);
      }),
      { numRuns: scaled(500) },
    );
  });

  const said = (text: string): Message => ({ role: 'user', content: textContent(text) });

  it('lets a summary that quotes and marks up what it keeps keep it (retention)', () => {
    const replaced: Message[] = [
      said('read src/auth/login.ts, docs/api.md, src/a.ts and src/b.ts, see https://a.example/x'),
      {
        role: 'tool',
        content: {
          texts: [],
          toolCalls: [],
          results: [{ name: 'read', text: 'src/c.ts:12 src/d.ts', error: false, images: 0, files: 0 }],
          images: 0,
          files: [],
        },
      },
    ];
    const summary =
      'Read «src/auth/login.ts» and “docs/api.md”; fixed _src/a.ts_ (src/b.ts#L10-L20), dropped ~~src/c.ts~~, kept ' +
      '「src/d.ts」 and _https://a.example/x_\u200b.';
    const retention = retentionOf(replaced, summary);
    expect(retention.lost).toEqual([]);
    expect(retention.fraction).toBe(1);
    expect(retentionFailure(retention, 1)).toBeNull();
  });

  it('gives a text of wrapped paths full retention of itself (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(pathArb, place, wrapper, ending), { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.map(([p, at, [l, r], end]) => `${l}${p}${at}${r}${end}`).join(' and ');
        const r = retentionOf([said(text)], text);
        expect(r.total).toBe(new Set(parts.map(([p]) => p)).size);
        expect(r.fraction).toBe(1);
      }),
    );
  });

  it('gives any text full retention of itself (property)', () => {
    const piece = fc.oneof(fc.string({ unit: 'binary' }), pathArb, fc.constantFrom(...pairs.flat(), '…', '。', '#L1'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(retentionOf([said(text)], text).fraction).toBe(1);
      }),
    );
  });
});

describe('paths of every shape in every wrapping', () => {
  it.each([
    ['src/C#/Program.cs', 'src/C#/Program.cs'],
    ['/home/me/C#/Program.cs', '/home/me/C#/Program.cs'],
    ['./C#/Program.cs', 'C#/Program.cs'],
    ['docs/a#b.md#intro', 'docs/a#b.md'],
    ['src\\app\\Main.cs', 'src\\app\\Main.cs'],
    ['docs\\Readme.md', 'docs\\Readme.md'],
    ['.\\src\\app\\Main.cs', 'src\\app\\Main.cs'],
    ['..\\lib\\a.js', '..\\lib\\a.js'],
    ['{"path": "src\\\\app\\\\Main.cs"}', 'src\\app\\Main.cs'],
    ['**C:\\proj\\a.txt**', 'C:\\proj\\a.txt'],
    ['_C:\\proj\\a.txt_', 'C:\\proj\\a.txt'],
    ['~~C:\\proj\\a.txt~~', 'C:\\proj\\a.txt'],
    ['*C:\\proj\\a.txt*', 'C:\\proj\\a.txt'],
    ['**\\\\srv\\share\\a.txt**', '\\\\srv\\share\\a.txt'],
    ['**src\\nodes\\tree.ts**.', 'src\\nodes\\tree.ts'],
  ])('%s names the path %s', (text, value) => {
    expect(values(text, 'path')).toEqual([value]);
  });

  it.each([
    ['{"stdout": "README.md\\nsrc\\npackage.json"}', ['README.md', 'package.json']],
    ['{"path": "src/caf\\u00e9.ts"}', ['src/café.ts']],
    ['"see\\nsrc/a.ts"', ['src/a.ts']],
  ])('reads a JSON document’s strings as the text they hold: %s', (text, paths) => {
    expect(values(text, 'path')).toEqual(paths);
  });

  it.each([
    ['const patch = "+[package]\\n+edition.workspace = true\\n+x.workspace = true\\n";', []],
    ['print("see\\nout\\nconfig.ts\\n")', ['config.ts']],
    ['s = "a.ts\\nb.ts\\n"', ['a.ts', 'b.ts']],
  ])('reads `\\n` as a line break in a text that writes escapes: %s', (text, paths) => {
    expect(values(text, 'path')).toEqual(paths);
  });

  it.each([
    ['src\\tests\\FooTests.cs(12,5): error CS1002: ; expected "x\\"y"', 'src\\tests\\FooTests.cs'],
    ['Error in src\\runtime\\a.cs: expected \\"}\\"', 'src\\runtime\\a.cs'],
    ['print("done\\n") # see src\\nodes\\a.ts', 'src\\nodes\\a.ts'],
    ['print("see C:\\new\\a.ts\\n")', 'C:\\new\\a.ts'],
    ['print("\\nC:\\new\\a.ts\\n")', 'C:\\new\\a.ts'],
    ['src\\n\\Main.cs', 'src\\n\\Main.cs'],
    ['src\\t\\x.cs', 'src\\t\\x.cs'],
    ['src\\r\\x.cs', 'src\\r\\x.cs'],
  ])('reads a path-shaped word as a path, whatever the text escapes elsewhere: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each([
    ['a\\x\\c.txt', 'a\\x\\c.txt'],
    ['a\\b\\c.txt', 'a\\b\\c.txt'],
    ['b\\src\\x.py', 'b\\src\\x.py'],
  ])('strips a diff header’s `a/` only from a path written with slashes: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each([
    ['read @CLAUDE.md first', 'CLAUDE.md'],
    ['see @src/a.ts', 'src/a.ts'],
    ['see @./src/a.ts', 'src/a.ts'],
    ['see @~/notes.md', '~/notes.md'],
    ['see @src\\app\\Main.cs', 'src\\app\\Main.cs'],
    ['**@docs/api.md**', 'docs/api.md'],
    ['@Makefile', 'Makefile'],
    ['@.env', '.env'],
    ['see @src/components/', 'src/components'],
  ])('reads a Claude Code file mention as its path: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each(['@types/node', '@solana/web3.js', '@/components/Button.vue', 'me@example.com', '@octocat'])(
    '%s is no file mention',
    (text) => {
      expect(values(text, 'path')).toEqual([]);
    },
  );

  it.each([
    ['src/a.ts#', 'src/a.ts'],
    ['see README.md#.', 'README.md'],
  ])('drops an empty anchor: %s', (text, path) => {
    expect(values(text, 'path')).toEqual([path]);
  });

  it.each(['#notes.txt#', 'src/#a.ts#', '_#notes.txt#_'])('takes %s for an Emacs lock file, no path', (text) => {
    expect(values(text, 'path')).toEqual([]);
  });

  /** A segment: letters and digits of any script, with `#`, `+`, `-` and `.` between them. */
  const alnum = fc.constantFrom(...'abnrtzABZ09éü中яß'.split(''));
  const joined = fc.tuple(fc.constantFrom('#', '+', '-', '.', ''), alnum).map(([p, c]) => `${p}${c}`);
  const segment = fc
    .tuple(alnum, fc.array(joined, { minLength: 1, maxLength: 4 }))
    .map(([first, rest]) => `${first}${rest.join('')}`);
  const extension = fc.constantFrom('ts', 'py', 'md', 'rs', 'cs', 'txt');
  /** Folders whose names, after a backslash, read like escapes (`\nodes`, `\tests`, `\u00e9`). */
  const escapeLike = fc.constantFrom('n', 't', 'r', 'nodes', 'tests', 'runtime', 'u00e9', 'x41');
  const dirs = fc.array(fc.oneof(segment, escapeLike), { minLength: 1, maxLength: 3 });
  /** A Claude Code file mention's `@`, or nothing. */
  const mention = fc.constantFrom('', '', '@');

  /** A path as written and the value extraction must give for it (the independent model of the normalisation). */
  const written = fc.oneof(
    // A mention names the path after its `@` (`@/` is a bundler's alias, not a mention).
    fc
      .tuple(mention, fc.constantFrom('/', '', './', '../', '~/'), dirs, segment, extension)
      .map(([at, root, ds, name, ext]) => {
        const rest = `${ds.join('/')}/${name}.${ext}`;
        const text = `${root === '/' ? '' : at}${root}${rest}`;
        return { text, value: root === './' ? rest : `${root}${rest}` };
      }),
    fc
      .tuple(mention, fc.constantFrom('C', 'd'), fc.constantFrom('\\', '/'), dirs, segment, extension)
      .map(([at, drive, sep, ds, name, ext]) => {
        const rest = `${ds.join(sep)}${sep}${name}.${ext}`;
        return { text: `${at}${drive}:${sep}${rest}`, value: `${drive.toUpperCase()}:${sep}${rest}` };
      }),
    fc.tuple(mention, fc.constantFrom('', '.\\', '..\\'), dirs, segment, extension).map(([at, root, ds, name, ext]) => {
      const rest = `${ds.join('\\')}\\${name}.${ext}`;
      return { text: `${at}${root}${rest}`, value: root === '.\\' ? rest : `${root}${rest}` };
    }),
    fc.tuple(mention, dirs, segment, extension).map(([at, ds, name, ext]) => {
      const value = `\\\\${ds.join('\\')}\\${name}.${ext}`;
      return { text: `${at}${value}`, value };
    }),
  );
  const wrapping = fc.constantFrom(
    ['', ''],
    ['`', '`'],
    ['"', '"'],
    ["'", "'"],
    ['(', ')'],
    ['**', '**'],
    ['_', '_'],
    ['~~', '~~'],
    ['*', '*'],
    ['**_', '_**'],
  );
  /** What names a place in the file, written right after it. */
  const spot = fc.constantFrom('', '', ':12', ':12:5', '#L10', '#L10-L20');
  const after = fc.constantFrom('', '.', ',', ':', ';', '!', '?', ').', '...');
  /**
   * Text that names nothing, said elsewhere in the same message: escaped quotes and `\n` before a quote (so the text
   * writes escapes), and `\n` or `\t` between words.
   */
  const aside = fc.constantFrom(
    '',
    'error: ; expected "x\\"y"',
    'expected \\"}\\"',
    'print("done\\n")',
    'one\\ntwo',
    'a\\tb',
    'x = "\\r\\n"',
  );

  it('finds a path exactly, in prose, in any wrapping, before any punctuation (property)', () => {
    fc.assert(
      fc.property(
        written,
        spot,
        wrapping,
        after,
        aside,
        aside,
        ({ text, value }, at, [left, right], end, pre, post) => {
          const line = `${pre} see ${left}${text}${at}${right}${end} then ${post}`;
          expect(identifiersIn(line)).toEqual([one('path', value)]);
        },
      ),
      { numRuns: scaled(2000) },
    );
  });

  it('finds a path exactly in a removed tool call’s JSON arguments (property)', async () => {
    await fc.assert(
      fc.asyncProperty(written, spot, wrapping, after, aside, async ({ text, value }, at, [left, right], end, pre) => {
        const command = `${pre} see ${left}${text}${at}${right}${end} then`;
        const chat = [
          { role: 'system', content: 'You are a coding agent.' },
          { role: 'user', content: 'Look.' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'run', arguments: JSON.stringify({ command }) } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'done' },
          { role: 'user', content: `Go on. ${'lorem ipsum dolor sit amet '.repeat(40)}` },
          { role: 'assistant', content: 'Done.' },
        ];
        const out = await compactMessages(chat, { target: 200, tokenizer: 'approx' });
        expect(out.forgotten).toEqual([{ kind: 'path', value, message: 2 }]);
      }),
      { numRuns: scaled(300) },
    );
  });
});

describe('the extraction', () => {
  it('gives each identifier once, in the order first met', () => {
    expect(identifiersIn('a.ts b.ts a.ts https://x.example https://x.example/')).toEqual([
      one('path', 'a.ts'),
      one('path', 'b.ts'),
      one('url', 'https://x.example'),
    ]);
  });

  it.each([
    ['a word of one million characters', 'a/'.repeat(500_000)],
    ['a million short words', 'src/a '.repeat(200_000)],
    ['a line of backticks', '`a'.repeat(500_000)],
    ['colons and digits', ':1'.repeat(500_000)],
    ['a URL that never ends', `https://${'a('.repeat(500_000)}`],
    ['almost hashes', 'abcdef1.'.repeat(125_000)],
    ['almost HTTP statuses', 'HTTP '.repeat(200_000)],
    ['Windows separators', `C:${'\\\\'.repeat(500_000)}`],
    ['words of 2,000 path characters', `${'a/b.'.repeat(500)} `.repeat(500)],
    ['paths closed by alternating marks', `a/${'x'.repeat(1000)}${'_*'.repeat(500)} `.repeat(500)],
    ['paths wrapped in long runs of underscores', `a/${'_'.repeat(1000)}x${'_*'.repeat(500)} `.repeat(333)],
    ['URLs in long runs of underscores', `${'_'.repeat(1000)}https://a.example/${'_'.repeat(1000)} `.repeat(500)],
  ])('reads %s (1 MB) in linear time', (_name, text) => {
    // A backtracking pattern would take minutes on these; the test's time-out is the bound.
    expect(() => identifiersIn(text)).not.toThrow();
  });

  /**
   * How many characters the extraction reads out of its text: the loops that cut and trim words read one code unit at
   * a time through `charCodeAt`, so counting its calls counts their work, whatever the machine's speed.
   */
  function readsOf(text: string): number {
    const charCodeAt = Object.getOwnPropertyDescriptor(String.prototype, 'charCodeAt') as PropertyDescriptor;
    const read = String.prototype.charCodeAt;
    let reads = 0;
    Object.defineProperty(String.prototype, 'charCodeAt', {
      ...charCodeAt,
      value(this: string, index: number): number {
        reads++;
        return read.call(this, index);
      },
    });
    try {
      identifiersIn(text);
    } finally {
      Object.defineProperty(String.prototype, 'charCodeAt', charCodeAt);
    }
    return reads;
  }

  // Words longer than 2,048 characters are passed over whole, so a word just under that is the longest one read: the
  // reads per character must not grow with the word's length up to there (a round of trimming per mark would make
  // them grow with it, a thousandfold for these words).
  it.each([
    ['nothing but alternating marks', (n: number) => '_*'.repeat(n / 2)],
    ['a path closed by alternating marks', (n: number) => `a/${'x'.repeat(n / 2)}${'_*'.repeat(n / 4)}`],
    ['a path in runs of underscores', (n: number) => `a/${'_'.repeat(n / 2)}x${'_*'.repeat(n / 4)}`],
    ['a path in layers of every mark', (n: number) => `${'_*~'.repeat(n / 6)}a/b.ts${'~*_'.repeat(n / 6)}`],
    ['a home path in tildes', (n: number) => `${'~'.repeat(n / 2)}/a/b.ts${'~*'.repeat(n / 4)}`],
    ['a URL in runs of underscores', (n: number) => `${'_'.repeat(n / 2)}https://a.example/${'_'.repeat(n / 2)}`],
    ['a relative backslash path', (n: number) => `${'a\\'.repeat(n / 2)}`],
    ['JSON-escaped backslashes', (n: number) => `${'a\\\\'.repeat(n / 3)}`],
    ['backslashes among marks', (n: number) => `${'_\\*'.repeat(n / 3)}`],
    ['a path of hashes', (n: number) => `a/${'b#'.repeat(n / 2 - 2)}.ts`],
    ['a JSON document of escapes', (n: number) => `{"a":"${'\\n\\\\x'.repeat(n / 6)}"}`],
    ['line breaks written as escapes', (n: number) => 'a\\n'.repeat(n / 3)],
    ['a path of escape-like folders in escaped text', (n: number) => `${'n\\'.repeat(n / 2 - 3)}a.cs`],
  ])('reads %s a bounded number of times per character, however long the word', (_name, word) => {
    const perCharacter = (n: number): number => {
      const text = `${word(n)} `.repeat(Math.ceil(60_000 / n));
      return readsOf(text) / text.length;
    };
    const short = perCharacter(60);
    const long = perCharacter(2040);
    // Cutting the text into words reads each character once: a count below that would mean the counting is off.
    expect(short).toBeGreaterThanOrEqual(1);
    expect(long).toBeLessThan(20);
    expect(long).toBeLessThan(2 * short);
  });
});

/** Every string of a JSON value. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}

describe('the real transcripts of fixtures/real', () => {
  const root = path.join(process.cwd(), 'fixtures/real');
  const found = new Map<string, Set<string>>();
  for (const dir of fs.readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of fs.readdirSync(path.join(root, dir.name)).sort()) {
      const text = fs.readFileSync(path.join(root, dir.name, name), 'utf8');
      const docs = name.endsWith('.jsonl')
        ? text
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l) as unknown)
        : [JSON.parse(text) as unknown];
      for (const s of docs.flatMap((d) => stringsOf(d))) {
        for (const id of identifiersIn(s)) {
          const set = found.get(id.kind) ?? new Set<string>();
          set.add(id.value);
          found.set(id.kind, set);
        }
      }
    }
  }
  const has = (kind: IdentifierKind, value: string): boolean => found.get(kind)?.has(value) === true;

  it.each([
    ['path', '/tmp/tmpqwh7888i/src/string_utils.rs'],
    ['path', 'src/marshmallow/fields.py'],
    ['path', 'C:\\Users\\Username\\Desktop\\Images'],
    ['path', '/testbed/reproduce.py'],
    ['path', 'Cargo.toml'],
    ['url', 'https://github.com/marshmallow-code/marshmallow/blob/dev/src/marshmallow/fields.py#L1474'],
    ['url', 'https://en.wikipedia.org/wiki/Quantum_computing'],
    ['hash', '6322cf4'],
    ['uuid', '5c0375b4-57a5-4f26-b12d-d022ee4e51b7'],
    ['error', 'TS2307'],
    ['error', 'EISDIR'],
    ['error', 'IndentationError'],
    ['symbol', 'useReducer'],
    ['symbol', 'RubiksCube::Cube'],
  ] as const)('finds the %s %s', (kind, value) => {
    expect(has(kind, value)).toBe(true);
  });

  // False positives met while reviewing what these transcripts gave, by hand: each is now ruled out.
  it.each([
    ['path', '2→.claude/bin'],
    ['path', 'state.todos.map'],
    ['path', 'filteredTodos.map'],
    ['path', 'a/src/marshmallow/fields.py'],
    ['symbol', 'True'],
    ['symbol', 'False'],
    ['url', 'https://www.nbcbayarea.com/weather/'],
  ] as const)('does not take %s %s', (kind, value) => {
    expect(has(kind, value)).toBe(false);
  });
});
