import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/cli.js';

// The TypeScript examples of docs/library.md, type-checked against the library's own declarations. The SDKs they
// use are not dependencies: what those imports and the examples' free variables (`history`, `client`…) would be is
// unknown here, so only errors about the library's side count (an option that does not exist, a wrong type, a result
// field that is not there).

const DOC = path.join(ROOT, 'docs/library.md');

/** Errors that only say an SDK or a variable the example assumes is not at hand. */
const UNKNOWN_HERE = new Set([
  2304, // cannot find name
  2307, // cannot find module
  2552, // cannot find name, did you mean
  7006, // parameter implicitly has an 'any' type (a callback of an SDK function)
  7031, // binding element implicitly has an 'any' type
  18004, // a shorthand property whose variable the example assumes
]);

describe('the examples of docs/library.md', () => {
  it('type-check against the library', () => {
    const text = readFileSync(DOC, 'utf8');
    const blocks = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(blocks.length).toBeGreaterThan(8);
    const files = new Map(
      blocks.map((code, k) => [path.join(ROOT, '.examples', `example-${k}.ts`), `${code}\nexport {};\n`]),
    );
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      // No DOM: its globals (`history`, `name`…) would stand in for the examples' own variables.
      lib: ['lib.es2022.d.ts'],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ['node'],
      baseUrl: ROOT,
      paths: { 'transcript-compact': ['src/index.ts'] },
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version) => {
      const code = files.get(path.resolve(name));
      return code === undefined ? getSourceFile(name, version) : ts.createSourceFile(name, code, version);
    };
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => files.has(path.resolve(name)) || fileExists(name);
    const program = ts.createProgram([...files.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file !== undefined && files.has(path.resolve(d.file.fileName)) && !UNKNOWN_HERE.has(d.code))
      .map((d) => {
        const file = d.file as ts.SourceFile;
        const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${path.basename(file.fileName)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  }, 60_000);
});
