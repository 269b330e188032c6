import type { Identifier } from './kinds.js';

// What one word is: the rules that tell a path, a hash, a UUID or an error from any other word, and its value.

/** Whether a word has nothing but letters (no digit, dot, slash, colon, underscore or dash): prose, mostly. */
export function isPlainWord(word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    const c = word.charCodeAt(k);
    if (c < 0x41 || (c > 0x5a && c < 0x61) || (c > 0x7a && c < 0xc0)) return false;
  }
  return true;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A UUID, a hash or an error a whole word is, or null. */
export function singleOf(word: string): Identifier | null {
  if (word.length === 36 && UUID.test(word)) return { kind: 'uuid', value: word.toLowerCase() };
  if (isHash(word)) return { kind: 'hash', value: word };
  const error = errorOf(word);
  return error === null ? null : { kind: 'error', value: error };
}

/** A commit hash: 7 to 40 lowercase hex digits with at least one digit and one letter (not a number like `1e100000`). */
export function isHash(word: string): boolean {
  const c = word.charCodeAt(0);
  if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  if (word.length < 7 || word.length > 40 || !/^[0-9a-f]+$/.test(word)) return false;
  return /[0-9]/.test(word) && /[a-f]/.test(word) && !/^\d+e\d+$/.test(word);
}

/** POSIX and Windows error codes Node and libc report (`ENOENT`, `EACCES`…): a fixed list, so `EVERY` is not one. */
const ERRNO = new Set(
  (
    'E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EAI_AGAIN EALREADY EBADF EBUSY ECANCELED ECHILD ECONNABORTED ' +
    'ECONNREFUSED ECONNRESET EDEADLK EDESTADDRREQ EDOM EDQUOT EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH EIDRM EILSEQ EINPROGRESS EINTR ' +
    'EINVAL EIO EISCONN EISDIR ELOOP EMFILE EMLINK EMSGSIZE ENAMETOOLONG ENETDOWN ENETRESET ENETUNREACH ENFILE ENOBUFS ENODATA ENODEV ' +
    'ENOENT ENOEXEC ENOLCK ENOMEM ENOSPC ENOSYS ENOTCONN ENOTDIR ENOTEMPTY ENOTFOUND ENOTSOCK ENOTSUP ENOTTY ENXIO EOPNOTSUPP EOVERFLOW ' +
    'EPERM EPIPE EPROTO EPROTONOSUPPORT ERANGE EROFS ESHUTDOWN ESPIPE ESRCH ESTALE ETIMEDOUT ETXTBSY EWOULDBLOCK EXDEV'
  ).split(' '),
);

/**
 * The error a word names, or null: an exception class (`TypeError`, `json.JSONDecodeError` as `JSONDecodeError`,
 * `NullPointerException`), an errno code, a Node `ERR_*` code, or a compiler's code (`E0308` Rust, `TS2345`
 * TypeScript, `CS0103` C#).
 */
export function errorOf(word: string): string | null {
  if (word.length > 120) return null;
  if (word.endsWith('Error') || word.endsWith('Exception')) {
    if (!/^(?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception)$/.test(word)) return null;
    const name = word.slice(word.lastIndexOf('.') + 1);
    return name === 'Error' || name === 'Exception' ? null : name;
  }
  const c = word.charCodeAt(0);
  if (c === 0x45) {
    if (ERRNO.has(word) || /^(?:ERR_[A-Z0-9_]*[A-Z0-9]|E\d{4})$/.test(word)) return word;
  } else if ((c === 0x54 || c === 0x43) && word.charCodeAt(1) === 0x53) {
    if (/^(?:TS\d{4,5}|CS\d{4})$/.test(word)) return word;
  }
  return null;
}

const REASONS =
  'Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Conflict|Gone|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout';
const STATUS_AFTER = new RegExp(
  `^(?:HTTP(?:/\\d(?:\\.\\d)?)?:? {1,3}([45]\\d\\d)|[Ss]tatus(?: code)?:? {1,2}([45]\\d\\d)|([45]\\d\\d) (?:${REASONS}))(?![\\w/.])`,
);

/** The HTTP status named by a word and the ones right after it (`HTTP 404`, `status 503`, `404 Not Found`), as `HTTP 404`. */
export function statusAfter(text: string, start: number, end: number, visit: (id: Identifier) => void): void {
  const c = text.charCodeAt(start);
  const word = end - start;
  const http = c === 0x48 && text.startsWith('HTTP', start) && (word === 4 || text.charCodeAt(start + 4) === 0x2f);
  const status = (c === 0x53 || c === 0x73) && word === 6 && text.startsWith('tatus', start + 1);
  const code = (c === 0x34 || c === 0x35) && word === 3;
  if (!http && !status && !code) return;
  const m = STATUS_AFTER.exec(text.slice(start, Math.min(text.length, start + 40)));
  if (m === null || end - start > 8) return;
  visit({ kind: 'error', value: `HTTP ${m[1] ?? m[2] ?? m[3]}` });
}

/** File extensions a word without a slash must end with to be a file name (case-insensitive). */
const EXTENSIONS = new Set(
  (
    'ts tsx mts cts js jsx mjs cjs json jsonl json5 md mdx rst txt py pyi ipynb rs go java kt kts scala c h cc cpp cxx hpp hh cs fs ' +
    'rb php swift m mm dart lua pl pm r jl ex exs erl hrl hs ml mli clj cljs elm zig nim sol vue svelte astro sh bash zsh fish ps1 psm1 ' +
    'bat cmd yml yaml toml ini cfg conf env properties xml html htm css scss sass less sql graphql gql proto tf hcl gradle mk cmake ' +
    'lock log csv tsv parquet db sqlite gz tgz zip tar bz2 xz 7z png jpg jpeg gif svg webp ico bmp pdf wasm map patch diff ' +
    'so dll dylib exe jar whl pt onnx pkl npy npz h5 bin dat'
  ).split(' '),
);

/** Extensions that are also common member names (`console.log`, `res.json`, `process.env`): these stems are code, not files. */
const MEMBER_EXTENSIONS = new Set([
  'log',
  'json',
  'map',
  'env',
  'lock',
  'bin',
  'db',
  'c',
  'h',
  'm',
  'r',
  'sh',
  'dat',
  'exe',
  'diff',
  'patch',
  'cmd',
  'pt',
]);
const MEMBER_STEMS = new Set(
  'console logger log res resp response req request process self this window document arr array list items obj object result results value values data err error e r x os sys json JSON Object Array Promise Math ctx context app router'.split(
    ' ',
  ),
);

/** Product names spelt like files (`Node.js`, `Vue.js`): names, not paths. */
const PRODUCTS = new Set([
  'node.js',
  'vue.js',
  'next.js',
  'nuxt.js',
  'express.js',
  'three.js',
  'chart.js',
  'd3.js',
  'react.js',
  'ember.js',
  'backbone.js',
  'angular.js',
  'socket.io',
  'deno.js',
  'alpine.js',
  'p5.js',
  'tensorflow.js',
  'ml5.js',
]);

/** Files known by name alone. */
export const NAMED_FILES = new Set([
  'Makefile',
  'Dockerfile',
  'Containerfile',
  'Gemfile',
  'Rakefile',
  'Procfile',
  'Jenkinsfile',
  'Vagrantfile',
  'Brewfile',
  'Justfile',
  'Pipfile',
  'CODEOWNERS',
]);

/** First folders of a relative path that make one slash enough (`src/core` is a path; `and/or` is not). */
const KNOWN_DIRS = new Set(
  'src lib libs test tests spec specs __tests__ docs doc bin scripts script app apps packages pkg cmd internal node_modules dist build out target vendor fixtures examples example config configs public static assets include tools .github .vscode .git components pages crates benches'.split(
    ' ',
  ),
);

/** Top folders of an absolute path that are paths alone (`/tmp`); other one-part words (`/clear`) are slash commands. */
const KNOWN_ROOTS = new Set(
  'tmp etc usr var home opt dev proc root bin sbin lib mnt srv Users Volumes private workspace'.split(' '),
);

/** Characters a path may hold (beyond non-ASCII letters). */
const PATH_CHARS = /^[\p{L}\p{N}\p{M}_.\-~/+@#]+$/u;

/**
 * The path a word is, normalised, or null. A `:line` or `:line:col` suffix is dropped (`src/a.ts:12:5` is
 * `src/a.ts`), and so is a `#` anchor (`src/a.ts#L10-L20`, `README.md#usage`), a leading `./`, a trailing `/` and
 * a file mention's `@` (`@src/a.ts`); a Windows path keeps its backslashes (doubled ones from JSON text made single)
 * and gets its drive letter in capitals.
 */
export function pathOf(word: string): string | null {
  if (word.length > 1024) return null;
  if (word.charCodeAt(0) === 0x40) return mentionedPath(word);
  return readPath(word, true);
}

/**
 * The path a Claude Code file mention names (`@src/a.ts`, `@CLAUDE.md`, `@src/components/`), or null: a file by a known
 * extension or name, a folder written with its trailing slash, or a path from `./`, `../` or `~/`. So an npm scope
 * (`@types/node`, `@solana/web3.js`: a `.js` name right under an unknown folder) is none, nor is a bundler's alias of
 * the source folder (`@/components/a.vue`).
 */
function mentionedPath(word: string): string | null {
  const rest = word.slice(1);
  const c = rest.charCodeAt(0);
  if (c === 0x2f || c === 0x40) return null;
  const scope = /^([^/\\]+)\/[^/\\]+\.js$/.exec(rest);
  if (scope !== null && !KNOWN_DIRS.has(scope[1] as string)) return null;
  const path = readPath(rest, false);
  if (path === null) return null;
  const marked = /^(?:\.{1,2}|~)[/\\]/.test(rest) || /[/\\]$/.test(rest);
  return marked || namesFile(path) ? path : null;
}

/**
 * The path a word is, or null (see `pathOf`).
 * @param diff whether `a/` and `b/` are a diff header's (only in a path written with slashes, never a mention's)
 */
function readPath(word: string, diff: boolean): string | null {
  let w = word;
  const at = w.search(/:\d/);
  if (at > 1) w = w.slice(0, at);
  w = w.slice(0, anchorAt(w));
  // After a name with an extension, a `#` with nothing after it is an empty anchor (`src/a.ts#`), but Emacs's lock
  // and autosave files (`src/#a.ts#`) are not the file.
  if (w.endsWith('#') && w.lastIndexOf('.') > lastSeparatorOf(w)) {
    if (w.charCodeAt(lastSeparatorOf(w) + 1) === 0x23) return null;
    w = w.slice(0, -1);
  }
  if (isWindowsStart(w, 0)) return windowsPath(w);
  if (w.indexOf('\\') >= 0) return backslashPath(w);
  if (!PATH_CHARS.test(w) || w.startsWith('@') || w.includes('//') || !/\p{L}/u.test(w)) return null;
  const dotted = w.startsWith('./');
  while (w.startsWith('./')) w = w.slice(2);
  const trailing = w.length > 1 && w.endsWith('/');
  if (trailing) w = w.slice(0, -1);
  if (w === '' || w === '.' || w === '..' || w === '~') return null;
  if (w.startsWith('/')) return isAbsolutePath(w, trailing) ? w : null;
  if (w.startsWith('~/') || w.startsWith('../')) return w.length > 2 ? w : null;
  // `a/src/x.py` and `b/src/x.py` in a diff's header name `src/x.py`.
  if (diff && /^[ab]\/[^/]+\//.test(w)) w = w.slice(2);
  const parts = w.split('/');
  const last = parts[parts.length - 1] as string;
  if (parts.length === 1) return dotted || isFileName(last) ? w : null;
  if (dotted || hasExtension(last)) return w;
  // A known first folder, or a hidden one (`.claude/bin`), makes one slash enough.
  if (KNOWN_DIRS.has(parts[0] as string) || /^\.\w/.test(parts[0] as string)) return w;
  return trailing && parts.length >= 2 ? w : null;
}

/** Where the last separator (`/` or `\`) of a word is, or -1. */
function lastSeparatorOf(word: string): number {
  return Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\'));
}

/**
 * Where a word's `#` anchor starts, or its length when it has none. An anchor names a place in the file, as a line
 * number does: `src/a.ts#L10` and `README.md#usage` name the file. Only the last `#` of the last part can be one, and
 * not when nothing follows it (Emacs's `#a.ts#`) or a name with an extension does (`C#.cs`, `a#b.md`): a `#` is a
 * name's own there, as in a folder (`src/C#/a.cs`).
 */
function anchorAt(word: string): number {
  const at = word.lastIndexOf('#');
  if (at <= lastSeparatorOf(word) + 1 || at === word.length - 1 || hasExtension(word.slice(at + 1))) return word.length;
  return at;
}

/**
 * A relative path with backslashes (`src\app\Main.cs`, `..\lib\a.js`, JSON's doubled `src\\app`) by the rules of
 * its POSIX spelling, as written, a leading `.\` dropped; null with both separators or backslashes of mixed runs.
 */
function backslashPath(w: string): string | null {
  if (w.indexOf('/') >= 0 || w.startsWith('\\')) return null;
  let run = 0;
  let first = 0;
  for (let k = 0; k <= w.length; k++) {
    if (k < w.length && w.charCodeAt(k) === 0x5c) {
      run++;
      continue;
    }
    if (run > 0) {
      if (first === 0) first = run;
      if (run !== first || run > 2) return null;
    }
    run = 0;
  }
  const single = first === 2 ? w.replace(/\\\\/g, '\\') : w;
  // Git writes its `a/` and `b/` with slashes: `a\b\c.txt` is all its own.
  const posix = readPath(single.replace(/\\/g, '/'), false);
  return posix === null ? null : posix.replace(/\//g, '\\');
}

/** An absolute POSIX path: two parts or more, a file name, a folder with its slash, or a known top folder. */
function isAbsolutePath(w: string, trailing: boolean): boolean {
  if (w.indexOf('/', 1) > 0) return true;
  const only = w.slice(1);
  return hasExtension(only) || (trailing && only.length >= 2) || KNOWN_ROOTS.has(only);
}

/** A Windows path as written in a message, JSON's doubled backslashes made single, the drive letter in capitals. */
function windowsPath(w: string): string | null {
  let value = w.replace(/\\\\/g, '\\');
  if (value.startsWith('\\') && !value.startsWith('\\\\')) value = `\\${value}`;
  while (value.length > 3 && (value.endsWith('\\') || value.endsWith('/'))) value = value.slice(0, -1);
  if (value.length <= 3 || !/\p{L}/u.test(value.slice(2))) return null;
  return /^[a-z]:/.test(value) ? value.charAt(0).toUpperCase() + value.slice(1) : value;
}

/** Whether a file name ends with an extension of letters or digits, at least one a letter (`a.ts`, not `v1.2`). */
function hasExtension(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return (
    dot > 0 &&
    dot < name.length - 1 &&
    /^[A-Za-z0-9]{1,10}$/.test(name.slice(dot + 1)) &&
    /[A-Za-z]/.test(name.slice(dot + 1))
  );
}

/**
 * Whether a path's last part names a file by a known extension (`a.cs`), as a dotfile or by name (`Makefile`): a
 * word of escaped text that reads as such a path is one (`src\tests\a.cs`), whatever escapes it seems to hold.
 */
export function namesFile(path: string): boolean {
  const name = path.slice(lastSeparatorOf(path) + 1);
  const dot = name.lastIndexOf('.');
  return NAMED_FILES.has(name) || dot === 0 || (dot > 0 && EXTENSIONS.has(name.slice(dot + 1).toLowerCase()));
}

/** Whether a word with no slash is a file name: a known extension, a dotfile, or a file known by name. */
function isFileName(name: string): boolean {
  if (NAMED_FILES.has(name)) return true;
  if (name.startsWith('.'))
    return /^\.(?:env(?:\.[\w-]+)?|[\w-]+rc(?:\.\w+)?|[\w-]*ignore|gitattributes|gitmodules|editorconfig|nvmrc|tool-versions)$/.test(
      name,
    );
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  const ext = name.slice(dot + 1).toLowerCase();
  if (!EXTENSIONS.has(ext)) return false;
  if (PRODUCTS.has(name.toLowerCase())) return false;
  const stem = name.slice(0, dot);
  // `10:30 a.m.` and `2 p.m.` are times of day.
  if (/^[ap]\.m$/i.test(name)) return false;
  // `.map` is a source map only after another extension (`app.js.map`); `todos.map` is a call.
  if (ext === 'map' && !/\.(?:js|mjs|cjs|css|ts)$/i.test(stem)) return false;
  if (MEMBER_EXTENSIONS.has(ext) && (MEMBER_STEMS.has(stem) || MEMBER_STEMS.has(stem.slice(stem.lastIndexOf('.') + 1))))
    return false;
  return /[A-Za-z0-9_]/.test(stem);
}

/**
 * Whether a Windows path starts here: `C:\`, `C:/` or a `\\server` share.
 * @param from where the word holding it starts: a drive letter right after a letter or digit of that word is not one
 */
export function isWindowsStart(word: string, i: number, from = 0): boolean {
  const c = word.charCodeAt(i);
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  if (letter && word.charCodeAt(i + 1) === 0x3a) {
    const s = word.charCodeAt(i + 2);
    const before = i <= from ? 0 : word.charCodeAt(i - 1);
    const alone = !(
      (before >= 0x41 && before <= 0x5a) ||
      (before >= 0x61 && before <= 0x7a) ||
      (before >= 0x30 && before <= 0x39)
    );
    return alone && (s === 0x5c || s === 0x2f) && i + 3 < word.length && word.charCodeAt(i + 3) !== 0x2f;
  }
  return c === 0x5c && word.charCodeAt(i + 1) === 0x5c && i + 2 < word.length && word.charCodeAt(i + 2) !== 0x5c;
}
