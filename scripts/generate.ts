/**
 * Deterministic transcript generator for the benchmark: OpenAI chat messages, one per JSONL line, shaped like
 * an agent's session log (instructions, user tasks, assistant steps with tool calls, tool results), with a mix of
 * English prose, code, JSON tool output and non-ASCII text. The same seed, size and count give the same bytes.
 *
 * Usage: node --loader ts-node/esm scripts/generate.ts <out.jsonl> <bytes> <messages> [seed]
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A small seeded PRNG (mulberry32): the same seed gives the same files on every machine. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the of and to in is that it for on with as this be are was by at from or an not have which can will but all ' +
  'we if when they there more about one would so what into some use only also then these two other time first new ' +
  'file function value error test build change update result return check request response server client cache ' +
  'query table index user session token message model config option default path module import export type class ' +
  'method handler event stream buffer parse write read output input limit target budget history window step task ' +
  'because however therefore instead although while after before during since until unless whether rather quite ' +
  'likely probably clearly simply exactly carefully quickly directly eventually finally already actually usually ' +
  'migration database schema column constraint transaction rollback commit branch merge conflict release version ' +
  'dependency package install upgrade deprecated warning failing passing flaky timeout retry backoff concurrency ' +
  'thread worker queue scheduler memory allocation garbage collector latency throughput benchmark profile trace ' +
  'refactor rename extract inline interface implementation abstraction boundary invariant assertion regression ' +
  'customer invoice payment refund subscription account balance order shipment address warehouse inventory ' +
  'flight booking reservation passenger baggage cancellation itinerary airport departure arrival connection seat'
).split(' ');

const NON_ASCII = [
  '我们需要先检查配置文件，然后再运行测试。',
  '这个函数在处理空输入时会抛出异常，请修复它。',
  '数据库迁移失败了，因为外键约束与现有数据冲突。',
  'ファイルを読み込んでから、結果を要約してください。',
  'このエラーはキャッシュの有効期限が切れたときに発生します。',
  'テストがタイムアウトしたので、リトライ回数を増やしました。',
  '설정 파일을 확인한 다음 테스트를 다시 실행하세요.',
  '이 함수는 빈 입력을 처리할 때 예외를 발생시킵니다.',
  'Пожалуйста, проверьте журнал ошибок и перезапустите сервер.',
  'Миграция базы данных завершилась с ошибкой ограничения.',
  'Η συνάρτηση επιστρέφει λάθος τιμή όταν η είσοδος είναι κενή.',
  'Bitte überprüfe die Konfigurationsdatei und führe die Tests erneut aus.',
  'La requête a échoué à cause d’un délai d’attente dépassé côté serveur.',
  'El pedido número 4521 todavía no se ha enviado; ¿puedes revisarlo?',
  'Kullanıcı oturumu süresi dolduğunda yeniden giriş yapmalıdır.',
  'Đơn hàng đã được giao nhưng khách hàng chưa nhận được hóa đơn.',
  'यह फ़ंक्शन खाली इनपुट पर त्रुटि देता है।',
  'تحقق من ملف الإعدادات ثم أعد تشغيل الاختبارات.',
  'Done ✅ — all 42 tests pass 🎉 (took 3.2 s ⏱️)',
  '⚠️ Warning: the cache is stale → rebuilding… ✨',
];

const TOOLS = [
  'read_file',
  'search_code',
  'run_tests',
  'list_directory',
  'run_command',
  'get_order',
  'search_flights',
  'apply_patch',
];

/** Builds texts from a seeded random source. */
class Writer {
  private callId = 0;
  constructor(readonly random: () => number) {}

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)] as T;
  }

  identifier(): string {
    const a = this.pick(WORDS);
    const b = this.pick(WORDS);
    return this.random() < 0.5 ? `${a}${b.charAt(0).toUpperCase()}${b.slice(1)}` : `${a}_${b}`;
  }

  hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'.charAt(Math.floor(this.random() * 16));
    return s;
  }

  sentence(): string {
    const n = this.int(6, 22);
    const words: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = this.random();
      if (r < 0.04) words.push(String(this.int(0, 99999)));
      else if (r < 0.07) words.push(`\`${this.identifier()}\``);
      else if (r < 0.08) words.push(`src/${this.pick(WORDS)}/${this.identifier()}.ts`);
      else words.push(this.pick(WORDS));
    }
    const s = words.join(' ');
    return `${s.charAt(0).toUpperCase()}${s.slice(1)}${this.pick(['.', '.', '.', '?', '!', ':'])}`;
  }

  prose(chars: number): string {
    const parts: string[] = [];
    let len = 0;
    while (len < chars) {
      const p = this.random() < 0.12 ? this.pick(NON_ASCII) : this.sentence();
      parts.push(p);
      len += p.length + 1;
      if (this.random() < 0.15) {
        parts.push('\n\n');
        len += 2;
      }
    }
    return parts.join(' ').replace(/ \n\n /g, '\n\n');
  }

  code(chars: number): string {
    const lines: string[] = [];
    let len = 0;
    const lang = this.random() < 0.5 ? 'ts' : 'py';
    while (len < chars) {
      const name = this.identifier();
      const arg = this.identifier();
      const block =
        lang === 'ts'
          ? [
              `export function ${name}(${arg}: ${this.pick(['string', 'number', 'Buffer', 'readonly Item[]'])}): ${this.pick(['boolean', 'number', 'void', 'Promise<Result>'])} {`,
              `  const ${this.identifier()} = ${arg}.${this.pick(['length', 'size', 'map((x) => x.id)', 'filter(Boolean)'])};`,
              `  if (${this.identifier()} > ${this.int(0, 4096)}) throw new Error('${this.sentence().slice(0, 40)}');`,
              `  // ${this.sentence()}`,
              `  return ${this.pick(['true', 'null as never', `${arg}.length`, `await fetch${this.int(1, 9)}()`])};`,
              '}',
              '',
            ]
          : [
              `def ${name}(${arg}, limit=${this.int(1, 512)}):`,
              `    """${this.sentence()}"""`,
              `    ${this.identifier()} = [x for x in ${arg} if x.${this.pick(WORDS)} is not None]`,
              `    if len(${arg}) > limit:`,
              `        raise ValueError(f"${this.pick(WORDS)} {len(${arg})} > {limit}")`,
              `    return ${this.identifier()}`,
              '',
            ];
      for (const l of block) {
        lines.push(l);
        len += l.length + 1;
      }
    }
    return lines.join('\n');
  }

  jsonOutput(chars: number): string {
    const rows: unknown[] = [];
    let len = 0;
    while (len < chars) {
      const row = {
        id: `${this.pick(['ord', 'usr', 'flt', 'inv'])}_${this.hex(10)}`,
        name: this.identifier(),
        status: this.pick(['ok', 'pending', 'failed', 'cancelled', 'delivered']),
        amount: Math.round(this.random() * 100000) / 100,
        updated_at: `2025-${String(this.int(1, 12)).padStart(2, '0')}-${String(this.int(1, 28)).padStart(2, '0')}T${String(this.int(0, 23)).padStart(2, '0')}:${String(this.int(0, 59)).padStart(2, '0')}:00Z`,
        note: this.random() < 0.2 ? this.pick(NON_ASCII) : this.sentence(),
        tags: [this.pick(WORDS), this.pick(WORDS)],
      };
      const s = JSON.stringify(row);
      rows.push(row);
      len += s.length + 1;
    }
    return JSON.stringify(
      { results: rows, total: rows.length, next_cursor: this.random() < 0.5 ? null : this.hex(16) },
      null,
      this.random() < 0.5 ? 2 : undefined,
    );
  }

  commandOutput(chars: number): string {
    const lines: string[] = [];
    let len = 0;
    while (len < chars) {
      const r = this.random();
      const l =
        r < 0.4
          ? `${this.pick(['PASS', 'PASS', 'PASS', 'FAIL'])} test/${this.pick(WORDS)}/${this.identifier()}.test.ts (${this.int(5, 2400)} ms)`
          : r < 0.7
            ? `  at ${this.identifier()} (src/${this.pick(WORDS)}/${this.identifier()}.ts:${this.int(1, 900)}:${this.int(1, 80)})`
            : r < 0.85
              ? `${this.hex(7)} ${this.sentence()}`
              : `-rw-r--r--  1 agent  staff  ${this.int(100, 999999)} ${this.pick(['Jan', 'Mar', 'Jul', 'Oct'])} ${this.int(1, 28)} ${this.identifier()}.${this.pick(['ts', 'py', 'json', 'md'])}`;
      lines.push(l);
      len += l.length + 1;
    }
    return lines.join('\n');
  }

  /** Tool output of about `chars` characters: JSON, code, command output or prose. */
  toolOutput(chars: number): string {
    const r = this.random();
    if (r < 0.35) return this.jsonOutput(chars);
    if (r < 0.6) return this.code(chars);
    if (r < 0.85) return this.commandOutput(chars);
    return this.prose(chars);
  }

  nextCallId(): string {
    this.callId++;
    return `call_${this.hex(8)}${this.callId.toString(36)}`;
  }
}

/** Draws a size around `mean` (a skewed spread: most small, some large). */
function sizeAround(w: Writer, mean: number): number {
  const r = w.random();
  const factor = r < 0.5 ? 0.3 + r : r < 0.9 ? 0.8 + (r - 0.5) * 2 : 1.6 + (r - 0.9) * 25;
  return Math.max(20, Math.round(mean * factor * 0.93));
}

/** One line of the transcript. */
type Line = Record<string, unknown>;

/**
 * Yields the messages of a session: instructions, then user turns, each with a few assistant steps.
 * @param count how many messages in all
 * @param meanChars the mean message size in characters
 */
export function* messages(w: Writer, count: number, meanChars: number): Generator<Line> {
  yield { role: 'system', content: `You are a coding and support agent. ${w.prose(Math.min(2000, meanChars * 2))}` };
  let produced = 1;
  while (produced < count) {
    const left = count - produced;
    const turnLength = Math.min(left, w.int(4, 40));
    yield {
      role: 'user',
      content:
        w.random() < 0.25
          ? `${w.pick(NON_ASCII)} ${w.prose(sizeAround(w, meanChars * 0.4))}`
          : w.prose(sizeAround(w, meanChars * 0.4)),
    };
    produced++;
    let inTurn = 1;
    while (inTurn < turnLength) {
      const room = turnLength - inTurn;
      if (room >= 2 && w.random() < 0.8) {
        const id = w.nextCallId();
        const name = w.pick(TOOLS);
        const args = { path: `src/${w.pick(WORDS)}/${w.identifier()}.ts`, query: w.pick(WORDS), limit: w.int(1, 200) };
        const text = w.random() < 0.5 ? w.prose(sizeAround(w, meanChars * 0.3)) : null;
        yield {
          role: 'assistant',
          content: text,
          tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        };
        yield { role: 'tool', tool_call_id: id, content: w.toolOutput(sizeAround(w, meanChars * 1.55)) };
        produced += 2;
        inTurn += 2;
      } else {
        const answer =
          w.random() < 0.4
            ? `${w.prose(sizeAround(w, meanChars * 0.5))}\n\n\`\`\`\n${w.code(sizeAround(w, meanChars * 0.4))}\n\`\`\``
            : w.prose(sizeAround(w, meanChars));
        yield { role: 'assistant', content: answer };
        produced++;
        inTurn++;
      }
    }
  }
}

function write(stream: WriteStream, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.write(chunk)) resolve();
    else {
      stream.once('drain', resolve);
      stream.once('error', reject);
    }
  });
}

/**
 * Writes a JSONL transcript of `count` messages and about `bytes` bytes.
 * @returns the bytes written
 */
export async function generateTranscript(file: string, bytes: number, count: number, seed = 7): Promise<number> {
  await mkdir(path.dirname(file), { recursive: true });
  const w = new Writer(createRandom(seed));
  // JSON framing and escapes add about 12% to the characters of the content.
  const meanChars = Math.max(40, Math.round(bytes / count / 1.12));
  const stream = createWriteStream(file);
  let written = 0;
  let batch: string[] = [];
  for (const m of messages(w, count, meanChars)) {
    const line = `${JSON.stringify(m)}\n`;
    batch.push(line);
    written += Buffer.byteLength(line);
    if (batch.length >= 256) {
      await write(stream, batch.join(''));
      batch = [];
    }
  }
  await write(stream, batch.join(''));
  await new Promise<void>((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return written;
}

const isMain = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const [out, bytes, count, seed] = process.argv.slice(2);
  if (out === undefined || bytes === undefined || count === undefined) {
    process.stderr.write('usage: generate.ts <out.jsonl> <bytes> <messages> [seed]\n');
    process.exitCode = 2;
  } else {
    const written = await generateTranscript(out, Number(bytes), Number(count), seed === undefined ? 7 : Number(seed));
    process.stdout.write(`${out}: ${written} bytes, ${count} messages\n`);
  }
}
