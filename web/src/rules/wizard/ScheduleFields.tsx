import { useId, useMemo } from 'react';
import { ApiProblem, placeFieldErrors } from '../../api/problem';
import type { Overlap, SchedulePreviewInput } from '../../api/types';
import { Field } from '../../ui/Field';
import { useDebounced } from '../../ui/useDebounced';
import { useSchedulePreview } from '../queries';
import { knownTimeZones, OVERLAPS, previewFieldOf, previewInputOf } from '../schedule';
import { SchedulePreview } from './SchedulePreview';
import type { StepProps } from './step';

// Listed once: some hundreds of names that do not change while the page is open.
const ZONES = knownTimeZones();

/** A cron trigger: the expression, its time zone and what a tick does while a run goes on, with its next runs as you type. */
export function ScheduleFields({ form, update, errors }: StepProps) {
  const zonesId = useId();
  // Debounced as text: a new object each render would never settle.
  const settled = useDebounced(JSON.stringify(previewInputOf(form)), 300);
  const input = useMemo(() => JSON.parse(settled) as SchedulePreviewInput | null, [settled]);
  const preview = useSchedulePreview(input);
  // The service's reading of the expression and the zone, at the field that holds each mistake.
  const refused = preview.isError && preview.error instanceof ApiProblem && preview.error.status === 400 ? placeFieldErrors(preview.error.fieldErrors, previewFieldOf) : null;
  const typed = input !== null;
  return (
    <div className="schedule-trigger">
      <Field
        label="Cron expression"
        error={errors.schedule ?? (typed ? refused?.errors.schedule : undefined)}
        hint={
          <>
            5 fields: minute, hour, day of month, month, day of week (<code>30 2 * * 1-5</code>: 02:30 on weekdays). 6 fields: seconds first (
            <code>*/10 * * * * *</code>). 7 fields: a year last. Or <code>@hourly</code>, <code>@daily</code> (<code>@midnight</code>), <code>@weekly</code>,{' '}
            <code>@monthly</code>, <code>@yearly</code> (<code>@annually</code>).
          </>
        }
      >
        <input className="mono" value={form.schedule} onChange={(event) => update({ schedule: event.target.value })} placeholder="*/5 * * * *" maxLength={200} autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="Time zone" error={errors.timezone ?? (typed ? refused?.errors.timezone : undefined)} hint="The schedule is read on this zone's clock, daylight saving included. Empty: UTC.">
        <input value={form.timezone} onChange={(event) => update({ timezone: event.target.value })} list={ZONES.length > 0 ? zonesId : undefined} placeholder="UTC" maxLength={100} autoComplete="off" spellCheck={false} />
      </Field>
      {ZONES.length > 0 ? (
        <datalist id={zonesId}>
          {ZONES.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
      ) : null}
      <fieldset className="choices choices-three" aria-describedby={errors.overlap ? 'overlap-error' : undefined}>
        <legend>A tick while the previous run goes on</legend>
        {(Object.keys(OVERLAPS) as Overlap[]).map((overlap) => (
          <label key={overlap} className={`choice${form.overlap === overlap ? ' choice-selected' : ''}`}>
            <input type="radio" name="overlap" checked={form.overlap === overlap} onChange={() => update({ overlap })} />
            <span>
              <strong>{OVERLAPS[overlap].title}</strong>
              <span className="choice-text">{OVERLAPS[overlap].text}</span>
            </span>
          </label>
        ))}
        {errors.overlap ? (
          <p className="field-error" id="overlap-error">
            {errors.overlap}
          </p>
        ) : null}
      </fieldset>
      <SchedulePreview input={input} preview={preview} refused={refused !== null && refused.unplaced.length === 0} />
    </div>
  );
}
