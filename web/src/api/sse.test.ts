import { describe, expect, it } from 'vitest';
import { SseParser } from './sse';

describe('SseParser', () => {
  it('reads events split anywhere, with any line ending', () => {
    const stream = 'event: output\ndata: {"chunk":"a"}\n\r\nevent: state\r\ndata: {"state":"running"}\r\n\r\n: keep-alive\n\ndata: plain\n\n';
    for (let cut = 0; cut <= stream.length; cut += 1) {
      const parser = new SseParser();
      const events = [...parser.push(stream.slice(0, cut)), ...parser.push(stream.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual([
        { event: 'output', data: '{"chunk":"a"}' },
        { event: 'state', data: '{"state":"running"}' },
        { event: 'message', data: 'plain' },
      ]);
    }
  });

  it('joins data lines with newlines and ignores unknown fields', () => {
    expect(new SseParser().push('id: 7\nretry: 10\ndata: one\ndata:two\n\n')).toEqual([{ event: 'message', data: 'one\ntwo' }]);
  });

  it('holds an event until its blank line arrives', () => {
    const parser = new SseParser();
    expect(parser.push('event: end\ndata: {}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'end', data: '{}' }]);
  });
});
