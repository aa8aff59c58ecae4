import { describe, expect, it } from 'vitest';
import { parseSse, SseLimitError, SseParser, type SseEvent } from '../../../src/mcp/sse.js';

function parseAll(chunks: (string | Buffer)[], limits = {}): SseEvent[] {
  const parser = new SseParser(limits);
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...parser.push(typeof c === 'string' ? Buffer.from(c) : c));
  parser.end();
  return events;
}

function limitOf(fn: () => unknown): SseLimitError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SseLimitError) return err;
    throw err;
  }
  throw new Error('expected SseLimitError');
}

describe('SseParser', () => {
  it('should parse one event with event, id and data', () => {
    expect(parseAll(['event: message\nid: 7\ndata: {"a":1}\n\n'])).toEqual([
      { event: 'message', data: '{"a":1}', id: '7', retry: undefined },
    ]);
  });

  it('should join several data lines with LF and default the event name to message', () => {
    expect(parseAll(['data: one\ndata: two\n\n'])).toEqual([
      { event: 'message', data: 'one\ntwo', id: undefined, retry: undefined },
    ]);
  });

  it.each([
    ['LF', 'data: x\n\ndata: y\n\n'],
    ['CRLF', 'data: x\r\n\r\ndata: y\r\n\r\n'],
    ['CR', 'data: x\r\rdata: y\r\r'],
  ])('should split lines on %s', (_name, text) => {
    expect(parseAll([text]).map((e) => e.data)).toEqual(['x', 'y']);
  });

  it('should treat a CRLF split across two chunks as one line ending', () => {
    expect(parseAll(['data: x\r', '\n\r', '\n']).map((e) => e.data)).toEqual(['x']);
  });

  // Read as two line endings, the split CRLF would be a blank line ending the event after `x`.
  it.each([
    ['the next line in the same chunk', ['data: x\r', '\ndata: y\r\n\r\n']],
    ['the LF alone in its chunk', ['data: x\r', '\n', 'data: y\r\n\r\n']],
    ['an empty chunk between CR and LF', ['data: x\r', '', '\ndata: y\n\n']],
  ])('should keep one event when a CRLF is split across chunks, with %s', (_name, chunks) => {
    expect(parseAll(chunks).map((e) => e.data)).toEqual(['x\ny']);
  });

  it('should not swallow a line that follows a lone CR at a chunk end', () => {
    expect(parseAll(['data: x\r', 'data: y\r\r']).map((e) => e.data)).toEqual(['x\ny']);
  });

  it('should reassemble a line split across many chunks, byte by byte', () => {
    const text = 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
    const chunks = [...Buffer.from(text)].map((b) => Buffer.from([b]));
    expect(parseAll(chunks).map((e) => e.data)).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}']);
  });

  it('should decode a multi-byte character split between chunks', () => {
    const bytes = Buffer.from('data: héllo €\n\n');
    const cut = bytes.indexOf(0xe2) + 1; // inside the euro sign
    expect(parseAll([bytes.subarray(0, cut), bytes.subarray(cut)]).map((e) => e.data)).toEqual(['héllo €']);
  });

  it('should skip comments, unknown fields, and a leading BOM', () => {
    expect(parseAll(['\uFEFF: keep-alive\nfoo: bar\ndata: x\n\n']).map((e) => e.data)).toEqual(['x']);
  });

  it('should dispatch an event with empty data but not a block without data lines', () => {
    expect(parseAll(['id: 1\n\ndata:\n\nevent: ping\n\n']).map((e) => e.data)).toEqual(['']);
  });

  it('should keep the last event id and retry across blocks, data or not, as resumption needs', () => {
    const parser = new SseParser();
    parser.push(Buffer.from('id: prime-1\nretry: 500\n\n'));
    expect([parser.lastEventId, parser.reconnectMs]).toEqual(['prime-1', 500]);
    parser.push(Buffer.from('data: no id\n\n'));
    expect(parser.lastEventId).toBe('prime-1');
    parser.push(Buffer.from('id: 7\ndata: x\n\nretry: soon\n\n'));
    expect([parser.lastEventId, parser.reconnectMs]).toEqual(['7', 500]);
    parser.push(Buffer.from('id:\n\n'));
    expect(parser.lastEventId).toBeUndefined();
  });

  it('should not take an id whose block never ended', () => {
    const parser = new SseParser();
    parser.push(Buffer.from('id: 1\n\nid: 2\ndata: cut'));
    parser.end();
    expect(parser.lastEventId).toBe('1');
  });

  it('should keep the value of a field without colon as empty, and strip only one leading space', () => {
    expect(parseAll(['data\ndata:  two\n\n']).map((e) => e.data)).toEqual(['\n two']);
  });

  it('should read retry only when it is all digits', () => {
    expect(parseAll(['retry: 1500\ndata: a\n\nretry: soon\ndata: b\n\n']).map((e) => e.retry)).toEqual([
      1500,
      undefined,
    ]);
  });

  it('should discard an event without its closing blank line at the end', () => {
    expect(parseAll(['data: complete\n\ndata: cut'])).toHaveLength(1);
  });

  it('should refuse a line longer than the limit, even before it ends', () => {
    const err = limitOf(() => parseAll([`data: ${'x'.repeat(200)}`], { maxLineBytes: 100 }));
    expect(err.code).toBe('SSE_LIMIT_EXCEEDED');
    expect(err.limit).toBe('line');
    const ended = limitOf(() => parseAll([`data: ${'x'.repeat(200)}\n`], { maxLineBytes: 100 }));
    expect(ended.limit).toBe('line');
  });

  it('should refuse more events than the limit', () => {
    const err = limitOf(() => parseAll(['data: a\n\n'.repeat(4)], { maxEvents: 3 }));
    expect(err.limit).toBe('events');
    expect(err.max).toBe(3);
  });

  it('should refuse more bytes than the limit, counting comments too', () => {
    const err = limitOf(() => parseAll([':'.repeat(60) + '\n', ':'.repeat(60) + '\n'], { maxBytes: 100 }));
    expect(err.limit).toBe('bytes');
  });

  it('should not keep a reference to a chunk the caller reuses', () => {
    const parser = new SseParser();
    const buf = Buffer.from('data: ab');
    parser.push(buf);
    buf.fill(0x7a);
    expect(parser.push(Buffer.from('c\n\n')).map((e) => e.data)).toEqual(['abc']);
  });
});

describe('parseSse', () => {
  it('should yield events lazily and close the source when the consumer stops', async () => {
    let closed = false;
    let produced = 0;
    async function* source(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          produced++;
          yield Buffer.from(`data: ${produced}\n\n`);
        }
      } finally {
        closed = true;
      }
    }
    const seen: string[] = [];
    for await (const event of parseSse(source())) {
      seen.push(event.data);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['1', '2', '3']);
    expect(closed).toBe(true);
    expect(produced).toBe(3);
  });
});
