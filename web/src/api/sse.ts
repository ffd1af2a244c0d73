import { apiFetch } from './client';

export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * Reads Server-Sent Events (the HTML spec's format) from text arriving in arbitrary pieces.
 * EventSource cannot send the Authorization header, so streams are read with fetch and this.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  /** Feeds more text; returns the events it completed. */
  push(text: string): ServerSentEvent[] {
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone \r at the end may be the first half of \r\n: wait for the next piece.
      if (width === 1 && this.buffer[newline] === '\r' && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      const completed = this.line(line);
      if (completed) events.push(completed);
    }
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') {
      const completed = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : undefined;
      this.event = '';
      this.data = [];
      return completed;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}

/** Follows an authenticated event stream until it ends or `signal` aborts. */
export async function followEvents(path: string, signal: AbortSignal, onEvent: (event: ServerSentEvent) => void): Promise<void> {
  const response = await apiFetch(path, { signal });
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    for (const event of parser.push(value)) onEvent(event);
  }
}
