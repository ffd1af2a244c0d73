import { describe, expect, it } from 'vitest';
import { placeFieldErrors } from '../../api/problem';
import type { Rule } from '../../api/types';
import { emptyForm, formFieldOf, formFromRule, stepErrors, toRuleInput, type RuleForm } from './form';
import { newRunbookFieldOf, newRunbookInput } from './runbook-form';

const RUNBOOK_ID = '0190a0b0-0000-7000-8000-000000000001';
const REPOSITORY_ID = '0190a0b0-0000-7000-8000-000000000002';

describe('the runbook of a script or CLI rule', () => {
  const form = (patch: Partial<RuleForm>): RuleForm => ({ ...emptyForm(), name: 'r', ...patch });

  it('sends a stored runbook following its latest version, or pinned to one', () => {
    expect(toRuleInput(form({ runbookSource: 'stored', runbookId: RUNBOOK_ID, runbookVersion: '3' })).action).toMatchObject({ runbook: { runbookId: RUNBOOK_ID } });
    expect(toRuleInput(form({ runbookSource: 'stored', runbookId: RUNBOOK_ID })).action).not.toHaveProperty('runbook.version');
    expect(toRuleInput(form({ runbookSource: 'stored', runbookId: RUNBOOK_ID, runbookPin: 'pinned', runbookVersion: ' 2 ' })).action).toMatchObject({ runbook: { runbookId: RUNBOOK_ID, version: 2 } });
  });

  it('sends a repository file with its ref only when given, and its interpreter', () => {
    const git = form({ runbookSource: 'git', repositoryId: REPOSITORY_ID, repositoryPath: ' runbooks/restart.sh ', interpreter: 'bash' });
    expect(toRuleInput(git).action).toMatchObject({ runbook: { repositoryId: REPOSITORY_ID, path: 'runbooks/restart.sh', interpreter: 'bash' } });
    expect(toRuleInput(git).action).not.toHaveProperty('runbook.ref');
    expect(toRuleInput({ ...git, repositoryRef: 'v2' }).action).toMatchObject({ runbook: { ref: 'v2' } });
  });

  it('stores a written script as a new runbook with its notes as the description', () => {
    const written = form({ runbookSource: 'new', newRunbookName: ' restart nginx ', script: 'systemctl restart nginx\n', notes: '# When\nnginx is down', interpreter: 'bash' });
    expect(newRunbookInput(written)).toEqual({ name: 'restart nginx', interpreter: 'bash', script: 'systemctl restart nginx\n', description: '# When\nnginx is down' });
  });

  it('checks what each source needs before leaving the step', () => {
    expect(stepErrors('action', form({ runbookSource: 'stored' }))).toEqual({ runbookId: 'pick the runbook the rule runs' });
    expect(stepErrors('action', form({ runbookSource: 'stored', runbookId: RUNBOOK_ID, runbookPin: 'pinned', runbookVersion: '0' }))).toEqual({ runbookVersion: 'must be from 1 to 1000000000' });
    expect(stepErrors('action', form({ runbookSource: 'new', script: ' ' }))).toEqual({ newRunbookName: 'name the new runbook, e.g. “restart nginx”', script: 'write the script to run' });
    expect(stepErrors('action', form({ runbookSource: 'git' }))).toEqual({
      repositoryId: 'pick the repository that holds the runbook',
      repositoryPath: 'give the path of the script in the repository, e.g. runbooks/restart.sh',
    });
    // A script left behind by another source is no reason to stop.
    expect(stepErrors('action', form({ runbookSource: 'stored', runbookId: RUNBOOK_ID, script: '' }))).toEqual({});
  });

  it('round-trips a rule with a stored runbook, without the fields the view adds', () => {
    const rule = {
      id: 'r1', name: 'disk', enabled: true, trigger: { type: 'webhook' },
      action: { type: 'cli', runbook: { runbookId: RUNBOOK_ID, version: 2, name: 'disk cleanup', resolvedVersion: 2, sha256: 'ab' }, timeoutSeconds: 60 },
      target: { type: 'cli_machine' }, infrastructureType: 'On_Premise', actionLimit: null,
      flapping: { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 },
    } as unknown as Rule;
    const edited = formFromRule(rule)!;
    expect(edited).toMatchObject({ runbookSource: 'stored', runbookId: RUNBOOK_ID, runbookPin: 'pinned', runbookVersion: '2' });
    expect(toRuleInput(edited).action).toEqual({ type: 'cli', runbook: { runbookId: RUNBOOK_ID, version: 2 }, timeoutSeconds: 60 });
  });

  it('round-trips a rule with a repository file', () => {
    const rule = {
      id: 'r1', name: 'restart', enabled: true, trigger: { type: 'webhook' },
      action: { type: 'script', flavour: 'autofix', runbook: { repositoryId: REPOSITORY_ID, path: 'runbooks/restart.sh', ref: 'main', interpreter: 'sh' }, timeoutSeconds: 300 },
      target: { type: 'trigger_host' }, infrastructureType: 'On_Premise', actionLimit: null,
      flapping: { enabled: false, maxEvents: 5, windowSeconds: 300, cooldownSeconds: 600, maxStateChanges: 3 },
    } as unknown as Rule;
    expect(toRuleInput(formFromRule(rule)!).action).toEqual(rule.action);
  });

  it('places the service errors about a referenced runbook at its fields', () => {
    const { errors } = placeFieldErrors(
      [
        { path: '/body/action/runbook/version', message: 'no version 9' },
        { path: '/body/action/runbook/path', message: 'not in the repository' },
      ],
      (path) => formFieldOf(path, 'script', 'git'),
    );
    expect(errors).toEqual({ runbookVersion: 'no version 9', repositoryPath: 'not in the repository' });
    expect(formFieldOf('/body/action/runbook', 'script', 'stored')).toBe('runbookId');
    expect(formFieldOf('/body/action/runbook', 'cli', 'git')).toBe('repositoryPath');
    expect(formFieldOf('/body/action/runbook', 'script', 'inline')).toBe('script');
    expect(newRunbookFieldOf('/body/name')).toBe('newRunbookName');
    expect(newRunbookFieldOf('/body/description')).toBe('notes');
    expect(newRunbookFieldOf('/body/env/0')).toBeUndefined();
  });
});
