/*
 * Splits sh/bash script text into the simple commands it would run, for the allowlist. It is a
 * scanner, not a shell: it knows quoting, separators, compound-command keywords, substitutions
 * ($( ), backticks, <( ), >( ), unquoted heredoc bodies) and reports as a problem anything it
 * cannot follow, so that the allowlist fails closed.
 */
import { ASSIGNMENT, WORD_END, WordScanner, type SimpleCommand, type SplitProblem } from './shell-words.js';

export type { Redirection, SimpleCommand, SplitProblem } from './shell-words.js';

export interface SplitScript {
  commands: SimpleCommand[];
  /** Names of the functions the script defines. */
  functions: string[];
  problems: SplitProblem[];
}

const BEFORE_COMMAND = new Set(['if', 'then', 'elif', 'else', 'do', 'while', 'until', '!', '{', 'time']);
const CLOSING = new Set(['fi', 'done', 'esac', '}']);
// A redirection operator, with an optional fd number or {name} before it. `<(` and `>(` are not.
const REDIRECTION = /^(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>(?!\()|<(?!\())/;

export function splitScript(script: string): SplitScript {
  const splitter = new Splitter(script, 1);
  splitter.parseList(false);
  return { commands: splitter.commands, functions: splitter.functions, problems: splitter.problems };
}

class Splitter extends WordScanner {
  parseList(nested: boolean): void {
    const cases: boolean[] = []; // one per open `case`: true while a pattern is expected
    while (this.skipBlanks(), this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === ')' && cases.at(-1) !== true) {
        this.pos++;
        if (nested) return;
        this.problem('unexpected )');
      } else if (c === '#') this.skipComment();
      else if (c === '\n') this.newline();
      else if (c === ';') {
        const op = /^(;;&|;;|;&|;)/.exec(this.rest())![0];
        this.pos += op.length;
        if (op !== ';' && cases.length > 0) cases[cases.length - 1] = true;
      } else if ((c === '&' && this.src[this.pos + 1] !== '>') || c === '|') {
        this.pos += /^(&&|\|\||\|&|&|\|)/.exec(this.rest())![0].length;
      } else if (cases.at(-1) === true) {
        if (/^esac(?=[\s;&|)]|$)/.test(this.rest())) {
          this.pos += 4;
          cases.pop();
        } else {
          this.readCasePattern();
          cases[cases.length - 1] = false;
        }
      } else this.readCommand(cases);
    }
    if (nested) this.problem('missing ) at the end of the script');
  }

  private readCommand(cases: boolean[]): void {
    const command: SimpleCommand = { line: this.line, assignments: [], words: [], redirections: [], text: '' };
    const parts: string[] = [];
    let atStart = true;
    let afterCompound = false;
    for (;;) {
      this.skipBlanks();
      const c = this.src[this.pos];
      const rest = this.rest();
      if (c === undefined || c === '\n' || c === ';' || c === '|' || c === ')' || (c === '&' && rest[1] !== '>')) break;
      if (c === '#') break;
      if (c === '(') {
        if (atStart && command.assignments.length === 0 && rest.startsWith('((')) {
          this.readArithmetic(2);
          atStart = false;
          afterCompound = true;
        } else if (atStart && command.assignments.length === 0) {
          this.pos++;
          this.parseList(true);
          atStart = false;
          afterCompound = true;
        } else if (command.words.length === 1 && parts.length === 1 && /^\(\s*\)/.test(rest)) {
          // `name() body`: a function definition; its body's commands are checked where they appear.
          this.pos += /^\(\s*\)/.exec(rest)![0].length;
          this.functions.push(command.words[0]!);
          command.words = [];
          parts.length = 0;
          atStart = true;
        } else {
          this.problem('unexpected (');
          this.pos++;
        }
        continue;
      }
      const redirection = (c === '<' || c === '>') && rest[1] === '(' ? null : REDIRECTION.exec(rest);
      if (redirection) {
        this.pos += redirection[0].length;
        const target = this.readRedirectionTarget(redirection[2]!);
        command.redirections.push({ operator: redirection[0], target });
        parts.push(redirection[0] + target);
        atStart = false;
        continue;
      }
      const word = this.readWord();
      if (atStart) {
        if (BEFORE_COMMAND.has(word)) continue;
        if (CLOSING.has(word)) {
          if (word === 'esac') cases.pop();
          afterCompound = true;
          continue;
        }
        if (word === 'for' || word === 'select') return this.readForHeader();
        if (word === 'case') {
          this.readCaseHeader();
          cases.push(true);
          return;
        }
        if (word === 'function') {
          this.skipBlanks();
          this.functions.push(this.readWord());
          this.skipBlanks();
          if (this.rest().startsWith('()')) this.pos += 2;
          continue;
        }
        if (word === '[[') return this.emit(command, ['[[', ...this.readDoubleBracket()]);
        if (ASSIGNMENT.test(word)) {
          command.assignments.push(word);
          continue;
        }
        atStart = false;
      }
      command.words.push(word);
      parts.push(word);
    }
    if (command.words.length > 0 || command.assignments.length > 0 || (command.redirections.length > 0 && !afterCompound)) {
      command.text = parts.join(' ');
      this.commands.push(command);
    }
  }

  protected nested(src: string, line: number): Splitter {
    return new Splitter(src, line);
  }

  private emit(command: SimpleCommand, words: string[]): void {
    command.words = words;
    command.text = words.join(' ');
    this.commands.push(command);
  }

  private readRedirectionTarget(operator: string): string {
    this.skipBlanks();
    const c = this.src[this.pos];
    if (c === undefined || (WORD_END.has(c) && !((c === '<' || c === '>') && this.src[this.pos + 1] === '('))) {
      this.problem(`the redirection ${operator} has no target`);
      return '';
    }
    const target = this.readWord();
    if (operator === '<<' || operator === '<<-') {
      this.heredocs.push({ delimiter: target.replace(/["'\\]/g, ''), stripTabs: operator === '<<-', expands: !/["'\\]/.test(target) });
    }
    return target;
  }

  private readForHeader(): void {
    this.skipBlanks();
    if (this.rest().startsWith('((')) return this.readArithmetic(2);
    while (this.skipBlanks(), this.pos < this.src.length && !'\n;&|)'.includes(this.src[this.pos]!)) {
      if (this.src[this.pos] === '#') return;
      this.readWord();
    }
  }

  private readCaseHeader(): void {
    this.skipBlanks();
    this.readWord();
    while (this.skipBlanks(), this.src[this.pos] === '\n') this.newline();
    if (this.readWord() !== 'in') this.problem('case without in');
  }

  private readCasePattern(): void {
    if (this.src[this.pos] === '(') this.pos++;
    while (this.skipBlanks(), this.pos < this.src.length && this.src[this.pos] !== ')') {
      if (this.src[this.pos] === '|') this.pos++;
      else if (this.src[this.pos] === '\n') this.newline();
      else this.readWord();
    }
    if (this.pos >= this.src.length) this.problem('a case pattern is never closed with )');
    this.pos++;
  }

  /** The words of `[[ ... ]]` after `[[`, where &&, ||, <, >, ( and ) are operators, not separators. */
  private readDoubleBracket(): string[] {
    const words: string[] = [];
    for (;;) {
      this.skipBlanks();
      const rest = this.rest();
      if (rest === '') {
        this.problem('[[ is never closed with ]]');
        return words;
      }
      if (/^\]\](?=[\s;&|)]|$)/.test(rest)) {
        this.pos += 2;
        return [...words, ']]'];
      }
      const operator = /^(&&|\|\||[<>()!|&])/.exec(rest);
      if (rest[0] === '\n') this.newline();
      else if (operator) {
        words.push(operator[0]);
        this.pos += operator[0].length;
      } else words.push(this.readWord());
    }
  }

}
