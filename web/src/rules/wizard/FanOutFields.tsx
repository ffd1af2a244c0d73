import { NumberField } from '../../ui/NumberField';
import type { StepProps } from './step';

/** How a fan-out over tags rolls: a few hosts at a time, stopping after failures. */
export function FanOutFields({ form, update, errors }: StepProps) {
  return (
    <fieldset className="fanout">
      <legend>Fan-out safety</legend>
      <p className="field-hint">
        A bad fix should not roll over the whole fleet at once. Hosts are taken in name order; leave a box empty for no limit.
      </p>
      <div className="field-row">
        <NumberField
          label="Hosts at once"
          error={errors.maxConcurrency}
          hint={<>the others wait their turn (<code>maxConcurrency</code>)</>}
          placeholder="all"
          value={form.maxConcurrency}
          onChange={(maxConcurrency) => update({ maxConcurrency })}
        />
        <NumberField
          label="Failed hosts before stopping"
          error={errors.maxErrors}
          hint={<>hosts not started yet are cancelled (<code>maxErrors</code>)</>}
          placeholder="never stop"
          value={form.maxErrors}
          onChange={(maxErrors) => update({ maxErrors })}
        />
      </div>
    </fieldset>
  );
}
