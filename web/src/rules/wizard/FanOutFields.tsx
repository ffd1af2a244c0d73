import { NumberField } from '../../ui/NumberField';
import type { StepProps } from './step';

interface FanOutProps {
  /** What fans out: a tag target's hosts, or a cloud action's instances. */
  what: 'hosts' | 'instances';
  atOnce: { value: string; error: string | undefined; onChange: (value: string) => void };
  failed: { value: string; error: string | undefined; onChange: (value: string) => void };
}

/** How a fan-out rolls: a few at a time, stopping after failures. */
export function FanOutFields({ what, atOnce, failed }: FanOutProps) {
  const title = what === 'hosts' ? 'Hosts' : 'Instances';
  return (
    <fieldset className="fanout">
      <legend>Fan-out safety</legend>
      <p className="field-hint">
        A bad fix should not roll over the whole fleet at once. {title} are taken in name order; leave a box empty for no limit.
      </p>
      <div className="field-row">
        <NumberField label={`${title} at once`} error={atOnce.error} hint={<>the others wait their turn (<code>maxConcurrency</code>)</>} placeholder="all" value={atOnce.value} onChange={atOnce.onChange} />
        <NumberField label={`Failed ${what} before stopping`} error={failed.error} hint={<>{what} not started yet are cancelled (<code>maxErrors</code>)</>} placeholder="never stop" value={failed.value} onChange={failed.onChange} />
      </div>
    </fieldset>
  );
}

/** The fan-out of a tag target's hosts (the target step). */
export function HostFanOutFields({ form, update, errors }: StepProps) {
  return (
    <FanOutFields
      what="hosts"
      atOnce={{ value: form.maxConcurrency, error: errors.maxConcurrency, onChange: (maxConcurrency) => update({ maxConcurrency }) }}
      failed={{ value: form.maxErrors, error: errors.maxErrors, onChange: (maxErrors) => update({ maxErrors }) }}
    />
  );
}
