import type { RuleInput } from '../../api/types';
import { Definitions, optionalRow, type Definition } from '../../ui/Definitions';
import { seconds } from '../../ui/format';
import { useCredentials } from '../../credentials/queries';
import { describeAction, describeCloudAction, describeCloudWait, describeFanOut, describeFlapping, describeLimit, describeTarget, limitUnitOf, describeTrigger, INFRASTRUCTURE_LABELS, INTERPRETER_LABELS } from '../describe';
import { OVERLAPS, scheduleInWords } from '../schedule';
import { useRepositories } from '../../repositories/queries';
import { useRunbookChoices } from '../../runbooks/queries';
import { toRuleInput, type RuleForm } from './form';
import type { StepProps } from './step';

export function ReviewStep({ form, update }: StepProps) {
  const input = toRuleInput(form);
  const credentials = useCredentials();
  const { action } = input;
  const nameOf = (id: string | undefined) => credentials.data?.items.find((c) => c.id === id)?.name ?? id;
  const runbookRow: Definition = ['Runbook', `${describeAction(action)} · ${useRunbookWords(form)} · timeout ${seconds(Number(form.timeoutSeconds))}`];
  const actionRows: Definition[] =
    action.type === 'cloud'
      ? [
          ['Cloud action', describeCloudAction(action, input.infrastructureType, nameOf(action.credentialId))],
          ['Wait', describeCloudWait(action)],
        ]
      : action.type === 'cli'
        ? [runbookRow, ['Credentials', action.credentialIds?.map(nameOf).join(', ') ?? 'none: no cloud identity']]
        : [
          ['Target', describeTarget(input.target, input.trigger.type)],
          ...optionalRow('Fan-out', describeFanOut(input.target, input.trigger.type)),
          runbookRow,
        ];
  const rows: Definition[] = [
    ['Name', input.name || <span className="muted">unnamed</span>],
    ['Trigger', describeTrigger(input.trigger)],
    ...(input.trigger.type === 'cron' ? scheduleRows(input.trigger) : []),
    ['Flapping protection', describeFlapping(input.flapping ?? { enabled: false })],
    ['Infrastructure', INFRASTRUCTURE_LABELS[input.infrastructureType]],
    ...actionRows,
    ['Action limit', describeLimit(input.actionLimit, limitUnitOf(action.type))],
  ];
  return (
    <>
      <Definitions items={rows} />
      <label className="checkbox">
        <input type="checkbox" checked={form.enabled} onChange={(event) => update({ enabled: event.target.checked })} />
        Turn the rule on now (off: alarms are recorded and no action runs)
      </label>
      <details className="api-preview">
        <summary>The same rule as an API request</summary>
        <pre>{JSON.stringify(input, null, 2)}</pre>
      </details>
    </>
  );
}

/** A schedule in words where it is a common one, and what a tick does while the previous run goes on. */
function scheduleRows(trigger: RuleInput['trigger']): Definition[] {
  const words = scheduleInWords(trigger.schedule ?? '');
  const overlap = OVERLAPS[trigger.overlap ?? 'skip'];
  return [
    ['Runs', words ? `${words}, ${trigger.timezone ?? 'UTC'} time` : <>as <code>{trigger.schedule}</code> says, in {trigger.timezone ?? 'UTC'}</>],
    ['Overlap', `${overlap.title}: ${overlap.text}`],
  ];
}

/** Where the runbook comes from, in words: "sh · 3 lines", "runbook “disk cleanup”, following its latest version (now 3)", a repository's file. */
function useRunbookWords(form: RuleForm): string {
  const runbooks = useRunbookChoices(form.runbookSource === 'stored');
  const repositories = useRepositories(form.runbookSource === 'git');
  const written = `${INTERPRETER_LABELS[form.interpreter]} · ${form.script.split('\n').length} lines`;
  const latest = runbooks.data?.find((r) => r.id === form.runbookId);
  switch (form.runbookSource) {
    case 'inline':
      return written;
    case 'new':
      return `new runbook “${form.newRunbookName.trim()}”, stored when you create the rule, ${form.runbookPin === 'pinned' ? 'pinned to version 1' : 'following its latest version'} · ${written}`;
    case 'stored': {
      const which = form.runbookPin === 'pinned' ? `pinned to version ${form.runbookVersion}` : `following its latest version${latest ? ` (now ${latest.version})` : ''}`;
      return `runbook “${latest?.name ?? form.runbookId}”, ${which}`;
    }
    case 'git': {
      const repository = repositories.data?.items.find((r) => r.id === form.repositoryId);
      return `${form.repositoryPath.trim()} in “${repository?.name ?? form.repositoryId}” at ${form.repositoryRef.trim() || repository?.ref || 'its own ref'} · ${INTERPRETER_LABELS[form.interpreter]}`;
    }
  }
}
