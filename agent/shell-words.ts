/*
 * The lexical half of the shell splitter (shell-split.ts has the grammar): words with their
 * quoting, every kind of substitution, heredoc bodies, and position and line bookkeeping.
 * Substitutions are parsed as nested lists whose commands join the enclosing script's.
 */

/** One simple command, as written: words keep their quotes. */
export interface SimpleCommand {
  line: number;
  /** Leading NAME=value words. */
  assignments: string[];
  /** The command word and its arguments. */
  words: string[];
  redirections: Redirection[];
  /** Words and redirections in written order, one space apart (a redirection is operator+target). */
  text: string;
}

export interface Redirection {
  operator: string;
  target: string;
}

export interface SplitProblem {
  line: number;
  message: string;
}

export interface Heredoc {
  delimiter: string;
  stripTabs: boolean;
  expands: boolean;
}

export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
export const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);

export abstract class WordScanner {
  readonly commands: SimpleCommand[] = [];
  readonly functions: string[] = [];
  readonly problems: SplitProblem[] = [];
  protected pos = 0;
  protected heredocs: Heredoc[] = [];

  constructor(
    protected readonly src: string,
    protected line: number,
  ) {}

  /** Reads commands until the end, or until the `)` that closes a nested list. */
  abstract parseList(nested: boolean): void;

  /** A scanner of the same grammar for text found inside this one (backticks, heredoc bodies). */
  protected abstract nested(src: string, line: number): WordScanner;

  private adopt(nested: WordScanner): void {
    this.commands.push(...nested.commands);
    this.functions.push(...nested.functions);
    this.problems.push(...nested.problems);
  }

  /** One word, as written, with every substitution inside it split out as nested commands. */
  protected readWord(): string {
    const start = this.pos;
    if ((this.src[this.pos] === '<' || this.src[this.pos] === '>') && this.src[this.pos + 1] === '(') {
      this.pos += 2;
      this.parseList(true);
    }
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '(' && ASSIGNMENT.test(this.src.slice(start, this.pos)) && this.src[this.pos - 1] === '=') {
        this.readArray();
        continue;
      }
      if (WORD_END.has(c)) break;
      if (!this.readQuotedOrExpansion(c)) this.pos++;
    }
    if (this.pos === start) {
      this.problem(`unexpected ${JSON.stringify(this.src[this.pos] ?? 'end of script')}`);
      this.pos++;
    }
    return this.src.slice(start, this.pos).replace(/\\\n/g, '');
  }

  /** Consumes a quote, escape or expansion starting at the current position; false if `c` is none. */
  private readQuotedOrExpansion(c: string): boolean {
    if (c === '\\') {
      if (this.src[this.pos + 1] === '\n') this.line++;
      this.pos += 2;
    } else if (c === "'") {
      const end = this.src.indexOf("'", this.pos + 1);
      if (end < 0) return this.fail('a quote (\') is never closed');
      this.countLines(this.pos, end);
      this.pos = end + 1;
    } else if (c === '"') {
      this.pos++;
      this.readDoubleQuoted('"');
    } else if (c === '`') {
      this.readBackticks();
    } else if (c === '$') {
      const next = this.src[this.pos + 1];
      if (next === '(' && this.src[this.pos + 2] === '(') {
        this.pos++;
        this.readArithmetic(2);
      } else if (next === '(') {
        this.pos += 2;
        this.parseList(true);
      } else if (next === '{') {
        this.pos += 2;
        this.readDoubleQuoted('}');
      } else if (next === "'") {
        let end = this.pos + 2;
        while (end < this.src.length && this.src[end] !== "'") end += this.src[end] === '\\' ? 2 : 1;
        if (end >= this.src.length) return this.fail("a $'...' string is never closed");
        this.countLines(this.pos, end);
        this.pos = end + 1;
      } else this.pos++;
    } else return false;
    return true;
  }

  /** The inside of "...", of ${...}, or of an expanding heredoc body (`until` = end of text). */
  protected readDoubleQuoted(until: '"' | '}' | 'eof'): void {
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === until) {
        this.pos++;
        return;
      }
      if (c === '\n') {
        this.line++;
        this.pos++;
      } else if (c === '\\' || c === '`' || c === '$' || (c === '"' && until === '}')) {
        // Single quotes are not followed inside ${...}: in "..." they are literal, and a $( ) they seem
        // to hide would still run. Seeing too many substitutions only ever refuses more.
        this.readQuotedOrExpansion(c);
      } else this.pos++;
    }
    if (until !== 'eof') this.problem(until === '"' ? 'a quote (") is never closed' : 'a ${ is never closed');
  }

  private readBackticks(): void {
    const open = this.pos;
    let end = this.pos + 1;
    while (end < this.src.length && this.src[end] !== '`') end += this.src[end] === '\\' ? 2 : 1;
    if (end >= this.src.length) {
      this.fail('a backtick (`) is never closed');
      return;
    }
    const inner = this.src.slice(open + 1, end).replace(/\\([`$\\])/g, '$1');
    const nested = this.nested(inner, this.line);
    nested.parseList(false);
    this.adopt(nested);
    this.countLines(open, end);
    this.pos = end + 1;
  }

  /** `((...))` or `$((...))` from its first `(`: arithmetic, whose own substitutions we do not follow. */
  protected readArithmetic(opening: number): void {
    const start = this.pos;
    let depth = 0;
    while (this.pos < this.src.length) {
      const c = this.src[this.pos++]!;
      if (c === '(') depth++;
      else if (c === ')' && --depth === 0) break;
      else if (c === '\n') this.line++;
    }
    const body = this.src.slice(start + opening, this.pos - opening);
    if (depth !== 0) this.problem('an arithmetic (( is never closed');
    else if (/\$\(|`/.test(body)) this.problem('a command substitution inside arithmetic (( )) cannot be checked');
  }

  private readArray(): void {
    this.pos++;
    for (;;) {
      this.skipBlanks();
      const c = this.src[this.pos];
      if (c === undefined) return void this.problem('an array ( is never closed');
      if (c === ')') return void this.pos++;
      if (c === '\n') this.newline();
      else this.readWord();
    }
  }

  protected newline(): void {
    this.pos++;
    this.line++;
    const pending = this.heredocs;
    this.heredocs = [];
    for (const heredoc of pending) this.readHeredocBody(heredoc);
  }

  private readHeredocBody(heredoc: Heredoc): void {
    const start = this.pos;
    const startLine = this.line;
    let end = this.src.length;
    while (this.pos < this.src.length) {
      const eol = this.src.indexOf('\n', this.pos);
      const lineEnd = eol < 0 ? this.src.length : eol;
      const text = this.src.slice(this.pos, lineEnd);
      const lineStart = this.pos;
      this.pos = eol < 0 ? this.src.length : eol + 1;
      this.line++;
      if ((heredoc.stripTabs ? text.replace(/^\t+/, '') : text) === heredoc.delimiter) {
        end = lineStart;
        break;
      }
    }
    if (!heredoc.expands) return;
    const body = this.nested(this.src.slice(start, end), startLine);
    body.readDoubleQuoted('eof');
    this.adopt(body);
  }

  protected skipBlanks(): void {
    for (;;) {
      const c = this.src[this.pos];
      if (c === ' ' || c === '\t' || c === '\r') this.pos++;
      else if (c === '\\' && this.src[this.pos + 1] === '\n') {
        this.pos += 2;
        this.line++;
      } else return;
    }
  }

  protected skipComment(): void {
    const eol = this.src.indexOf('\n', this.pos);
    this.pos = eol < 0 ? this.src.length : eol;
  }

  /** Enough of what follows for the lookahead patterns, without copying the rest of the script. */
  protected rest(): string {
    return this.src.slice(this.pos, this.pos + 64);
  }

  private countLines(from: number, to: number): void {
    for (let i = from; i < to; i++) if (this.src[i] === '\n') this.line++;
  }

  protected problem(message: string): void {
    this.problems.push({ line: this.line, message });
  }

  private fail(message: string): true {
    this.problem(message);
    this.pos = this.src.length;
    return true;
  }
}
