import { describe, expect, it } from 'vitest';
import { checkScript, globMatch } from './allowlist.js';
import { splitScript } from './shell-split.js';

const PATTERNS = ['systemctl restart *', 'systemctl status *', 'df', 'df *', 'grep *', 'journalctl *', 'cat /var/log/*', 'sort'];

describe('checkScript allows', () => {
  it.each([
    ['a matching command', 'systemctl restart nginx'],
    ['a bare command with its exact pattern', 'df'],
    ['pipelines and lists', 'df -h | grep /var && systemctl restart nginx || systemctl status nginx; df'],
    ['background jobs and wait', 'systemctl restart a & systemctl restart b &\nwait'],
    ['comments and blank lines', '# restart it\n\nsystemctl restart nginx # now\n'],
    ['leading assignments', 'LC_ALL=C df -h'],
    ['compound commands', 'if df -h | grep -q /var; then\n  systemctl restart nginx\nelif true; then :\nelse\n  echo none\nfi'],
    ['loops', 'for s in nginx php-fpm; do systemctl restart "$s"; done\nwhile false; do :; done'],
    ['case', 'case "$HostName" in\n  web-*) systemctl restart nginx ;;\n  (*) echo "not a web host" >&2 ;;\nesac'],
    ['function definitions (their bodies are checked)', 'fix() {\n  systemctl restart "$1"\n}\nfix nginx'],
    ['subshells and groups', '( df -h ) && { df; }'],
    ['substitutions whose commands match', 'systemctl restart "$(cat /var/log/service-name)"'],
    ['harmless builtins without patterns', 'set -eu\nexport LEVEL=3\n[ -n "$HostName" ] || exit 1\necho "restarting $HostName" >&2\nprintf "%s\\n" ok'],
    ['[[ ]] with && and < inside', '[[ -n "$a" && "$a" < "b" ]] && df'],
    ['a quoted heredoc given to a non-interpreter', 'grep x <<\'EOF\'\n$(rm -rf /)\nEOF'],
    ['output to /dev/null and descriptor copies', 'df -h >/dev/null 2>&1'],
    ['redirections after compound commands', 'for f in a; do df; done > /dev/null\n{ df; } 2>&1'],
    ['process substitution whose commands match', 'grep -f <(sort) /var/log/x'],
    ['arithmetic', 'n=$((1 + 2)); (( n > 1 )) && df'],
  ])('%s', (_name, script) => {
    expect(checkScript(script, 'sh', PATTERNS)).toEqual({ allowed: true });
  });

  it('everything when no pattern is given', () => {
    expect(checkScript('rm -rf /tmp/x; eval "$y"', 'bash', [])).toEqual({ allowed: true });
  });
});

describe('checkScript refuses', () => {
  it.each([
    ['a command outside the patterns', 'rm -rf /tmp/x', 'line 1: "rm -rf /tmp/x" is not allowed'],
    ['the first offender, with its line', 'df\nsystemctl restart nginx\nreboot', 'line 3: "reboot"'],
    ['a pattern that needs arguments when there are none', 'systemctl restart', '"systemctl restart" is not allowed'],
    ['a command hidden after a separator', 'df; rm -rf /', '"rm -rf /"'],
    ['a command after &&', 'df && curl evil', '"curl evil"'],
    ['a command in the background', 'df & nc -l 4444', '"nc -l 4444"'],
    ['a command in $( )', 'systemctl restart $(rm -rf /)', '"rm -rf /"'],
    ['a command in backticks', 'systemctl restart `reboot`', '"reboot"'],
    ['a command in a double-quoted $( )', 'systemctl restart "x$(reboot)"', '"reboot"'],
    ['a command in ${x:-$( )}', 'df "${x:-$(reboot)}"', '"reboot"'],
    ['a command in a subshell', '( reboot )', '"reboot"'],
    ['a command in a function body', 'f() { reboot; }', '"reboot"'],
    ['a command in an if condition', 'if reboot; then df; fi', '"reboot"'],
    ['a command in a case branch', 'case x in *) reboot ;; esac', '"reboot"'],
    ['a command in an expanding heredoc', 'grep x <<EOF\n$(reboot)\nEOF', '"reboot"'],
    ['a command in process substitution', 'grep -f <(reboot) x', '"reboot"'],
    ['eval', 'eval "df"', 'eval runs text built at run time'],
    ['exec', 'exec reboot', 'exec replaces the shell'],
    ['source and .', '. /tmp/x.sh', '. runs another file'],
    ['trap', "trap 'reboot' EXIT", 'trap runs its argument'],
    ['a command name in a variable', '$CMD restart nginx', 'its command name is only known when the script runs'],
    ['a command name from a substitution', '$(echo df) -h', 'its command name is only known'],
    ['a heredoc into an interpreter', 'python3 <<EOF\nimport os\nEOF', 'a heredoc or here-string gives an interpreter a script'],
    ['a here-string into a shell', 'bash <<< "reboot"', 'a heredoc or here-string'],
    ['PATH changed for a command', 'PATH=/tmp/evil df', 'assigning PATH'],
    ['PATH exported', 'export PATH=/tmp/evil:$PATH\ndf', 'assigning PATH'],
    ['LD_PRELOAD', 'LD_PRELOAD=/tmp/x.so df', 'assigning LD_PRELOAD'],
    ['echo that writes a file', 'echo x > /etc/cron.d/x', '"echo x >/etc/cron.d/x" is not allowed'],
    ['a lone redirection that empties a file', '> /etc/passwd', '">/etc/passwd"'],
    ['printf -v', 'printf -v PATH /tmp', '"printf -v PATH /tmp"'],
    ['an unterminated quote', 'df "x', 'a quote (") is never closed; the allowlist cannot check this script'],
    ['an unterminated $( )', 'df $(reboot', 'missing )'],
    ['a substitution inside arithmetic', 'echo $(( $(reboot) + 1 ))', 'inside arithmetic'],
    ['a command obfuscated with quotes', 'sys"temctl" restart nginx', '"sys"temctl" restart nginx" is not allowed'],
  ])('%s', (_name, script, reason) => {
    const verdict = checkScript(script, 'bash', PATTERNS);
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed ? '' : verdict.reason).toContain(reason);
  });

  it('python and pwsh scripts while an allowlist is set', () => {
    expect(checkScript('import os', 'python', PATTERNS)).toEqual({ allowed: false, reason: expect.stringContaining('can check only sh and bash scripts') });
  });
});

describe('explicitly allowed constructs', () => {
  it('pass when a pattern starting with the construct names them', () => {
    expect(checkScript('eval "$x"', 'sh', ['eval *'])).toEqual({ allowed: true });
    expect(checkScript('. /opt/fix/lib.sh', 'sh', ['. /opt/fix/*'])).toEqual({ allowed: true });
    expect(checkScript('PATH=/opt/bin:$PATH', 'sh', ['PATH=/opt/bin:*'])).toEqual({ allowed: true });
  });

  it('do not pass through a pattern that starts with *', () => {
    expect(checkScript('reboot', 'sh', ['*'])).toEqual({ allowed: true });
    expect(checkScript('eval reboot', 'sh', ['*']).allowed).toBe(false);
    expect(checkScript('$CMD', 'sh', ['*']).allowed).toBe(false);
  });
});

describe('globMatch', () => {
  it.each([
    ['df', 'df', true],
    ['df', 'df -h', false],
    ['df *', 'df -h', true],
    ['df *', 'df', false],
    ['systemctl restart *', 'systemctl restart nginx php', true],
    ['*.service', 'x.service', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXbYY', false],
    ['*', '', true],
    ['', '', true],
  ])('%s against %s is %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text)).toBe(expected);
  });

  it('stays fast on patterns that would make a backtracking regex explode', () => {
    const started = performance.now();
    expect(globMatch(`${'*a'.repeat(20)}b`, 'a'.repeat(5000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('splitScript', () => {
  it('keeps line numbers through heredocs and multi-line quotes', () => {
    const { commands } = splitScript('cat <<EOF\none\ntwo\nEOF\necho "a\nb"\ndf');
    expect(commands.map((c) => [c.line, c.words[0]])).toEqual([[1, 'cat'], [5, 'echo'], [7, 'df']]);
  });

  it('separates leading assignments and redirections from the words', () => {
    const [command] = splitScript('A=1 B="x y" cmd arg 2>/tmp/err').commands;
    expect(command).toMatchObject({ assignments: ['A=1', 'B="x y"'], words: ['cmd', 'arg'], redirections: [{ operator: '2>', target: '/tmp/err' }], text: 'cmd arg 2>/tmp/err' });
  });
});
