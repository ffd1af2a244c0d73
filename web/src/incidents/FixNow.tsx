import { useState, type FormEvent } from 'react';
import { mutationProblem } from '../api/problem';
import type { Incident } from '../api/incident-types';
import { useRuleNames } from '../rules/queries';
import { OutcomeBadge } from '../ui/Badge';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormBanner } from '../ui/states';
import { LiveRun } from './LiveRun';
import { useFixNow } from './queries';

/**
 * Fix now (POST /incidents/{id}/fix): a rule's action run for the incident, as Run now runs it,
 * with the incident's alarm, host and severity as the payload. The rules its alerts raised come
 * first in the list.
 */
export function FixNow({ incident }: { incident: Incident }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Fix now
      </button>
      <Dialog open={open} title={`Fix “${incident.alarmName}” now`} onClose={() => setOpen(false)} wide>
        {open ? <FixNowForm incident={incident} onClose={() => setOpen(false)} /> : null}
      </Dialog>
    </>
  );
}

function FixNowForm({ incident, onClose }: { incident: Incident; onClose: () => void }) {
  const names = useRuleNames();
  const all = [...(names.data ?? new Map<string, string>())].sort(([, a], [, b]) => a.localeCompare(b));
  const linked = all.filter(([id]) => incident.ruleIds.includes(id));
  const others = all.filter(([id]) => !incident.ruleIds.includes(id));
  const [ruleId, setRuleId] = useState(incident.ruleIds[0] ?? '');
  const [dryRun, setDryRun] = useState(false);
  const fix = useFixNow(incident.id);
  const { errors, banner } = mutationProblem(fix, (path) => (path.startsWith('/body/ruleId') ? 'ruleId' : undefined));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (ruleId) fix.mutate({ ruleId, ...(dryRun ? { act: false } : {}) });
  };
  return (
    <form onSubmit={submit} aria-label="fix the incident now">
      <div className="dialog-body">
        <p>
          The rule runs as its trigger would (off, flapping and its action limit apply), with this incident as the payload: <code>AlarmName={incident.alarmName}</code>
          {incident.hostname ? (
            <>
              , <code>HostName={incident.hostname}</code>
            </>
          ) : null}
          {incident.severity ? (
            <>
              , <code>Severity={incident.severity}</code>
            </>
          ) : null}
          . Its runs join the incident.
        </p>
        <Field label="Rule" error={errors.ruleId}>
          <select value={ruleId} onChange={(event) => setRuleId(event.target.value)}>
            <option value="">{names.isPending ? 'Loading rules…' : 'Choose a rule…'}</option>
            {linked.length > 0 ? (
              <optgroup label="Rules of this alarm">
                {linked.map(([id, name]) => (
                  <option key={id} value={id}>
                    {name}
                  </option>
                ))}
              </optgroup>
            ) : null}
            <optgroup label={linked.length > 0 ? 'Other rules' : 'Rules'}>
              {others.map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </optgroup>
          </select>
        </Field>
        <label className="checkbox">
          <input type="checkbox" checked={dryRun} onChange={(event) => setDryRun(event.target.checked)} /> Dry run: record the event, run nothing
        </label>
        <FormBanner banner={banner} />
        {fix.isSuccess ? (
          <div aria-live="polite">
            <p className="banner banner-info" role="status" aria-label="what the fix did">
              <span>
                <OutcomeBadge outcome={fix.data.outcome} /> {fix.data.reason ?? (fix.data.executionCount > 0 ? `${fix.data.executionCount} execution${fix.data.executionCount === 1 ? '' : 's'} queued` : 'recorded, nothing ran')}
              </span>
            </p>
            {fix.data.executionIds.slice(0, 3).map((id) => (
              <LiveRun key={id} executionId={id} />
            ))}
          </div>
        ) : null}
      </div>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
        <button type="submit" className="button button-primary" disabled={!ruleId || fix.isPending}>
          {fix.isPending ? 'Running…' : dryRun ? 'Record a dry run' : fix.isSuccess ? 'Run again' : 'Run the fix'}
        </button>
      </div>
    </form>
  );
}
