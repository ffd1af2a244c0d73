import { useState, type FormEvent } from 'react';
import { mutationProblem } from '../api/problem';
import type { Incident } from '../api/incident-types';
import { useRunbookChoices, useRunbookLibrary } from '../runbooks/queries';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { LiveRun } from './LiveRun';
import { useTroubleshoot, type RunbookChoice } from './queries';

/** A starter runbook is `starter:<slug>`, a stored one `runbook:<id>`: one select holds both. */
function choiceOf(value: string): RunbookChoice | undefined {
  if (value.startsWith('starter:')) return { starter: value.slice('starter:'.length) };
  if (value.startsWith('runbook:')) return { runbookId: value.slice('runbook:'.length) };
  return undefined;
}

type FormField = 'runbook' | 'hostname';

function fieldOf(path: string): FormField | undefined {
  if (/^\/body\/(runbookId|starter|version)/.test(path)) return 'runbook';
  if (path.startsWith('/body/hostname')) return 'hostname';
  return undefined;
}

/**
 * Troubleshoot now (POST /incidents/{id}/troubleshoot): a diagnostics runbook, stored or from the
 * starter library, run at once on the incident's host; its output streams here as it is written.
 */
export function TroubleshootPanel({ incident, suggested }: { incident: Incident; suggested?: string }) {
  const library = useRunbookLibrary();
  const stored = useRunbookChoices();
  const [choice, setChoice] = useState(suggested ? `starter:${suggested}` : '');
  const [hostname, setHostname] = useState(incident.hostname ?? '');
  const troubleshoot = useTroubleshoot(incident.id);
  const [runs, setRuns] = useState<string[]>([]);
  const { errors, banner } = mutationProblem(troubleshoot, fieldOf);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const runbook = choiceOf(choice);
    if (!runbook) return;
    const host = hostname.trim();
    troubleshoot.mutate({ ...runbook, ...(host && host !== incident.hostname ? { hostname: host } : {}) }, { onSuccess: (reply) => setRuns((current) => [reply.executionId, ...current]) });
  };

  return (
    <div className="troubleshoot">
      <form className="inline-form" onSubmit={submit} aria-label={`troubleshoot ${incident.alarmName}`}>
        <Field label="Diagnostics runbook" error={errors.runbook}>
          <select value={choice} onChange={(event) => setChoice(event.target.value)}>
            <option value="">Choose a runbook…</option>
            <optgroup label="Starter library">
              {(library.data?.items ?? []).map((item) => (
                <option key={item.slug} value={`starter:${item.slug}`}>
                  {item.name}
                </option>
              ))}
            </optgroup>
            {stored.data && stored.data.length > 0 ? (
              <optgroup label="Your runbooks">
                {stored.data.map((runbook) => (
                  <option key={runbook.id} value={`runbook:${runbook.id}`}>
                    {runbook.name}
                  </option>
                ))}
              </optgroup>
            ) : null}
          </select>
        </Field>
        <Field label="On host" error={errors.hostname} hint={incident.hostname ? undefined : 'The incident names no host: say where to run it.'}>
          <input className="mono" value={hostname} onChange={(event) => setHostname(event.target.value)} autoComplete="off" />
        </Field>
        <button type="submit" className="button button-primary" disabled={choice === '' || troubleshoot.isPending}>
          {troubleshoot.isPending ? 'Starting…' : runs.length > 0 ? 'Run again' : 'Run'}
        </button>
      </form>
      <FormBanner banner={banner} />
      {runs.map((id) => (
        <LiveRun key={id} executionId={id} />
      ))}
    </div>
  );
}
