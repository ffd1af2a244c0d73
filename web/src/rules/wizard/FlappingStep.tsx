import { NumberField } from '../../ui/NumberField';
import type { StepProps } from './step';

export function FlappingStep({ form, update, errors }: StepProps) {
  const off = !form.flappingEnabled;
  return (
    <>
      <p className="step-intro">
        An alarm that fires again and again, or keeps flipping between firing and resolved (it flaps), should not run the runbook every time.
        With protection on, each host is judged on its own: once its alarms arrive too often, or change state too often, within the window,
        actions on it pause until it has been quiet for the whole cool-down. The events are still recorded, with outcome <code>flapping</code>.
      </p>
      <label className="checkbox">
        <input type="checkbox" checked={form.flappingEnabled} onChange={(event) => update({ flappingEnabled: event.target.checked })} />
        Protect this rule against flapping
      </label>
      <div className="field-row">
        <NumberField label="Events allowed" error={errors.flappingMaxEvents} hint="per host, before actions pause" value={form.flappingMaxEvents} disabled={off} onChange={(flappingMaxEvents) => update({ flappingMaxEvents })} />
        <NumberField label="State changes allowed" error={errors.flappingMaxStateChanges} hint="firing ⇄ resolved, read from the payload's State" value={form.flappingMaxStateChanges} disabled={off} onChange={(flappingMaxStateChanges) => update({ flappingMaxStateChanges })} />
        <NumberField label="Window (seconds)" error={errors.flappingWindowSeconds} hint="both are counted over this span" value={form.flappingWindowSeconds} disabled={off} onChange={(flappingWindowSeconds) => update({ flappingWindowSeconds })} />
        <NumberField label="Cool-down (seconds)" error={errors.flappingCooldownSeconds} hint="quiet needed before actions resume" value={form.flappingCooldownSeconds} disabled={off} onChange={(flappingCooldownSeconds) => update({ flappingCooldownSeconds })} />
      </div>
    </>
  );
}
