import { useState, type FormEvent } from 'react';
import { EditableBy } from '../auth/useRole';
import { problemAtFields } from '../api/problem';
import type { Tenant, Throttle } from '../api/types';
import { NumberField } from '../ui/NumberField';
import { toNumber, wholeNumberError } from '../ui/numbers';
import { ErrorBanner } from '../ui/states';
import { useUpdateTenant } from './queries';
import { SaveBar } from './SaveBar';

type ThrottleField = 'ratePerSecond' | 'burst';
const MAX = 10_000_000;

/** The tenant's token bucket for webhook calls: the service's defaults, or its own rate and burst. */
export function ThrottleForm({ tenant }: { tenant: Tenant }) {
  const update = useUpdateTenant();
  const [custom, setCustom] = useState(tenant.throttle !== null);
  const [rate, setRate] = useState(String(tenant.throttle?.ratePerSecond ?? ''));
  const [burst, setBurst] = useState(String(tenant.throttle?.burst ?? ''));
  const [errors, setErrors] = useState<Partial<Record<ThrottleField, string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const change = (apply: () => void, field?: ThrottleField) => {
    apply();
    setSaved(null);
    if (field) setErrors((current) => ({ ...current, [field]: undefined }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBanner(null);
    const found = custom ? { ratePerSecond: wholeNumberError(rate, 1, MAX), burst: wholeNumberError(burst, 1, MAX) } : {};
    setErrors(found);
    if (found.ratePerSecond || found.burst) return;
    const throttle: Throttle | null = custom ? { ratePerSecond: toNumber(rate), burst: toNumber(burst) } : null;
    update.mutate(
      { throttle },
      {
        onSuccess: (tenant) => setSaved(tenant.throttle ? `Saved: ${describeThrottle(tenant.throttle)}.` : "Saved: the service's defaults apply."),
        onError: (error) => {
          const problem = problemAtFields(error, throttleFieldOf);
          setErrors(problem.errors);
          setBanner(problem.banner);
        },
      },
    );
  };

  return (
    <form className="panel" onSubmit={submit} noValidate aria-labelledby="throttle-heading">
      <EditableBy do="configure">
        <h2 id="throttle-heading">Throttle</h2>
        <p className="muted">
          A token bucket shared by all your API keys: up to <em>burst</em> webhook calls at once, refilled at <em>rate</em> calls per second. A call over
          it gets 429 with <code>Retry-After</code>, and nothing is recorded: monitoring tools that retry get through once the bucket refills.
        </p>
        <p className="banner banner-info" role="note">
          Now: {tenant.throttle ? describeThrottle(tenant.throttle) : "the service's defaults (PITCREW_THROTTLE_RATE, PITCREW_THROTTLE_BURST)"}.
        </p>
        {banner ? <ErrorBanner error={banner} /> : null}
        <fieldset className="choices choices-inline">
          <legend>Limit for this tenant</legend>
          <label className={`choice${custom ? '' : ' choice-selected'}`}>
            <input type="radio" name="throttle" checked={!custom} onChange={() => change(() => setCustom(false))} />
            <span>
              <strong>The service's defaults</strong>
              <span className="choice-text">Set by whoever runs pitcrew, the same for every tenant.</span>
            </span>
          </label>
          <label className={`choice${custom ? ' choice-selected' : ''}`}>
            <input type="radio" name="throttle" checked={custom} onChange={() => change(() => setCustom(true))} />
            <span>
              <strong>This tenant's own</strong>
              <span className="choice-text">For an alert storm bigger, or a budget smaller, than the defaults allow.</span>
            </span>
          </label>
        </fieldset>
        {custom ? (
          <div className="field-row">
            <NumberField label="Rate (calls per second)" hint="refill of the bucket" error={errors.ratePerSecond} value={rate} onChange={(value) => change(() => setRate(value), 'ratePerSecond')} />
            <NumberField label="Burst (calls)" hint="taken at once when the bucket is full" error={errors.burst} value={burst} onChange={(value) => change(() => setBurst(value), 'burst')} />
          </div>
        ) : null}
        <SaveBar label="Save throttle" busy={update.isPending} saved={saved} />
      </EditableBy>
    </form>
  );
}

function throttleFieldOf(path: string): ThrottleField | undefined {
  if (path.startsWith('/body/throttle/ratePerSecond')) return 'ratePerSecond';
  if (path.startsWith('/body/throttle/burst')) return 'burst';
  return undefined;
}

function describeThrottle(throttle: Throttle): string {
  return `${throttle.ratePerSecond} calls per second, bursts of ${throttle.burst}`;
}
