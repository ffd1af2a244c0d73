import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../api/incident-types';
import type { LibraryItem } from '../../api/runbook-types';
import { automationForm, automationNotice, withPrelude } from './automation';

const PRELUDE = '# from the alert\'s labels unless set (pitcrew one-click automation)\n: "${ServiceName:=${LABEL_service:-}}"\n';
const SCRIPT = '#!/bin/sh\n# pitcrew starter runbook "restart a systemd service": …\n# Notes: restart-service.md.\nset -u\n\nname=${ServiceName:-}\n';

describe('the one-click automation’s script', () => {
  it('takes the variables from the labels after the opening comment, which stays first', () => {
    expect(withPrelude(SCRIPT, PRELUDE)).toBe(
      '#!/bin/sh\n# pitcrew starter runbook "restart a systemd service": …\n# Notes: restart-service.md.\n'
      + '# from the alert\'s labels unless set (pitcrew one-click automation)\n: "${ServiceName:=${LABEL_service:-}}"\n'
      + 'set -u\n\nname=${ServiceName:-}\n',
    );
  });

  it('is the starter unchanged with no prelude, and ends with the prelude for a script of comments only', () => {
    expect(withPrelude(SCRIPT, '')).toBe(SCRIPT);
    expect(withPrelude('#!/bin/sh', PRELUDE)).toBe(`#!/bin/sh\n${PRELUDE}`);
  });

  it('fills the wizard with it, and says so', () => {
    const candidate = {
      integrationId: 'i-1', alarmName: 'ServiceDown', why: 'fired 4 times in 30 days',
      suggestion: {
        name: 'ServiceDown: restart a systemd service',
        trigger: { type: 'alert', integrationId: 'i-1', alarmName: 'ServiceDown' },
        target: { type: 'trigger_host' },
        starterRunbook: { slug: 'restart-service', name: 'restart a systemd service', flavour: 'autofix', why: 'restarts the systemd service', labelDefaults: [{ variable: 'ServiceName', labels: ['LABEL_service'] }], prelude: PRELUDE },
        labels: ['service'],
        flapping: { enabled: true, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600 },
        actionLimit: { max: 3, windowSeconds: 3600, onLimit: 'escalate' },
      },
    } as Candidate;
    const starter = { slug: 'restart-service', interpreter: 'sh', description: 'notes', script: SCRIPT } as LibraryItem & { script: string };
    const form = automationForm({ integrationId: 'i-1', alarmName: 'ServiceDown' }, candidate, starter);
    expect(form.script).toBe(withPrelude(SCRIPT, PRELUDE));
    expect(automationNotice({ integrationId: 'i-1', alarmName: 'ServiceDown' }, candidate)).toContain('the lines after its opening comment take ServiceName from the alert’s service label, unless set;');
  });
});
