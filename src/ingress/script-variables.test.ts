import { describe, expect, it } from 'vitest';
import { scriptVariables } from './script-variables.js';

describe('scriptVariables', () => {
  it('lists the names a shell script reads, once each, in order', () => {
    const script = [
      '#!/bin/sh',
      'systemctl restart "$Service" on ${HostName}',
      'echo "${Severity:-unknown} ${#AlarmName} $Service"',
    ].join('\n');
    expect(scriptVariables(script)).toEqual(['Service', 'HostName', 'Severity', 'AlarmName']);
  });

  it('leaves out what the script sets itself, what the shell sets, and names a payload cannot set', () => {
    const script = [
      'count=0; export LIMIT=5',
      'local depth; declare -i tries',
      'for f in /var/log/*.log; do count=$((count+1)); done',
      'read -r -p "?" answer other',
      'echo $count $LIMIT $f $answer $other $depth $tries $RANDOM $HOSTNAME $PATH $HOME $PITCREW_EXECUTION_ID $1 $@ $Disk',
    ].join('\n');
    expect(scriptVariables(script)).toEqual(['Disk']);
  });

  it('reads PowerShell and Python scripts their own way', () => {
    expect(scriptVariables('Restart-Service $env:ServiceName\nWrite-Output ${env:HostName} $local', 'pwsh')).toEqual(['ServiceName', 'HostName']);
    expect(scriptVariables('import os\nos.environ["Queue"]\nos.environ.get(\'HostName\')\nos.getenv("PATH")\nx = "$NotRead"', 'python')).toEqual(['Queue', 'HostName']);
  });
});
