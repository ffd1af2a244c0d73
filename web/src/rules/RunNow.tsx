import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { mutationProblem } from '../api/problem';
import type { Rule } from '../api/types';
import { OutcomeBadge } from '../ui/Badge';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormBanner, Loadable } from '../ui/states';
import { initialForm, runBody, useRunFields, useRunNow, type RunFields, type RunForm, type RunReply } from './run-now';

/**
 * Run now: raises the rule as its trigger would, through the same checks (off, flapping, action
 * limit), with a payload a person fills in from the rule's last events; as a dry run if asked.
 */
export function RunNow({ rule }: { rule: Rule }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Run now
      </button>
      <Dialog open={open} title={`Run “${rule.name}” now`} onClose={() => setOpen(false)} wide>
        <RunNowBody rule={rule} onClose={() => setOpen(false)} />
      </Dialog>
    </>
  );
}

function RunNowBody({ rule, onClose }: { rule: Rule; onClose: () => void }) {
  const fields = useRunFields(rule.id, true);
  return (
    <Loadable query={fields} what="the payload fields of its last events">
      {(data) => <RunNowForm rule={rule} fields={data} onClose={onClose} />}
    </Loadable>
  );
}

type FormField = 'HostName' | 'AlarmName' | 'MetaData';

function fieldOf(path: string): FormField | undefined {
  const field = /^\/body\/payload\/(HostName|AlarmName|MetaData)/.exec(path)?.[1];
  return field as FormField | undefined;
}

function RunNowForm({ rule, fields, onClose }: { rule: Rule; fields: RunFields; onClose: () => void }) {
  const [form, setForm] = useState<RunForm>(() => initialForm(fields));
  const run = useRunNow(rule.id);
  const { errors, banner } = mutationProblem(run, fieldOf);
  const set = (change: Partial<RunForm>) => setForm((current) => ({ ...current, ...change }));
  const setRow = (at: number, change: Partial<RunForm['metaData'][number]>) => set({ metaData: form.metaData.map((row, i) => (i === at ? { ...row, ...change } : row)) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    run.mutate(runBody(form, fields.fields));
  };
  return (
    <form onSubmit={submit} aria-label="run the rule now">
      <div className="dialog-body">
        <p>
          The run goes through the rule’s own checks, as a call of its trigger would: {rule.enabled ? 'flapping protection and the action limit apply.' : <strong>the rule is off, so it is recorded as rule_off and nothing runs.</strong>}{' '}
          It is recorded with source <code>manual</code> and your token as who asked.
        </p>
        <p className="muted">
          {fields.lastEventId ? `Prefilled from the last ${fields.eventsRead === 1 ? 'event' : `${fields.eventsRead} events`} of this rule.` : 'This rule has no event yet to prefill from.'}
          {fields.actionVariables.length > 0 ? ` Its action reads ${fields.actionVariables.map((name) => `$${name}`).join(', ')}.` : ''}
        </p>
        {fields.fields.length > 0 ? (
          <div className="field-row">
            {fields.fields.map((name) => (
              <Field key={name} label={name} hint={name === 'HostName' ? 'The host the alarm is about (a trigger_host target acts on it).' : 'The alarm’s name.'} error={errors[name]}>
                <input className="mono" value={form[name]} onChange={(event) => set({ [name]: event.target.value })} autoComplete="off" />
              </Field>
            ))}
          </div>
        ) : null}
        <fieldset>
          <legend className="field-label">MetaData: each pair reaches the runbook as $KEY</legend>
          {form.metaData.map((row, at) => (
            <div className="inline-form" key={at} data-metadata-row={at}>
              <Field label="Key">
                <input className="mono" value={row.key} onChange={(event) => setRow(at, { key: event.target.value })} autoComplete="off" />
              </Field>
              <Field label="Value">
                <input className="mono" value={row.value} onChange={(event) => setRow(at, { value: event.target.value })} autoComplete="off" />
              </Field>
              <button type="button" className="button button-quiet" aria-label={`Remove ${row.key || 'this pair'}`} onClick={() => set({ metaData: form.metaData.filter((_row, i) => i !== at) })}>
                Remove
              </button>
            </div>
          ))}
          {errors.MetaData ? <p className="field-error" role="alert">{errors.MetaData}</p> : null}
          <button type="button" className="button button-small" onClick={() => set({ metaData: [...form.metaData, { key: '', value: '' }] })}>
            Add a pair
          </button>
        </fieldset>
        <label className="checkbox">
          <input type="checkbox" checked={form.dryRun} onChange={(event) => set({ dryRun: event.target.checked })} /> Dry run (Act: false): record the event, run
          nothing
        </label>
      </div>
      <FormBanner banner={banner} />
      <div aria-live="polite" className="test-outcome">
        {run.isSuccess ? <RunOutcome ruleId={rule.id} reply={run.data} onClose={onClose} /> : null}
      </div>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
        <button type="submit" className="button button-primary" disabled={run.isPending}>
          {run.isPending ? 'Running…' : form.dryRun ? 'Record a dry run' : run.isSuccess ? 'Run again' : 'Run now'}
        </button>
      </div>
    </form>
  );
}

/** What the run did: its outcome and why, its executions, and its event. */
function RunOutcome({ ruleId, reply, onClose }: { ruleId: string; reply: RunReply; onClose: () => void }) {
  const more = reply.executionCount - reply.executionIds.length;
  return (
    <div className="banner banner-info" role="status" aria-label="what the run did">
      <div>
        <OutcomeBadge outcome={reply.outcome} /> {reply.reason ?? (reply.executionCount > 0 ? `${reply.executionCount} execution${reply.executionCount === 1 ? '' : 's'} queued` : 'recorded, nothing ran')}
        {reply.executionIds.length > 0 ? (
          <div>
            Executions:{' '}
            {reply.executionIds.map((id) => (
              <Link key={id} to={`/executions/${id}`} className="mono exec-link">
                {id.slice(-8)}
              </Link>
            ))}
            {more > 0 ? (
              <Link to={`/executions?event=${reply.eventId}`} className="exec-link">
                all {reply.executionCount}
              </Link>
            ) : null}
          </div>
        ) : null}
        {reply.skippedEnv.length > 0 ? (
          <div>
            Not exported:{' '}
            {reply.skippedEnv.map((skipped) => (
              <span key={skipped.name} className="chip chip-warn" title={skipped.reason}>
                {skipped.name}
              </span>
            ))}
          </div>
        ) : null}
        <div>
          {/* The event is on this page, behind the dialog: the link closes it. */}
          <Link to={`/rules/${ruleId}#event-${reply.eventId}`} onClick={onClose}>
            Event {reply.eventId.slice(-8)}
          </Link>
        </div>
      </div>
    </div>
  );
}
