import { useState, type FormEvent } from 'react';
import { EditableBy } from '../auth/useRole';
import { problemAtFields } from '../api/problem';
import type { IncidentSettings, Tenant } from '../api/types';
import { NumberField } from '../ui/NumberField';
import { toNumber, wholeNumberError } from '../ui/numbers';
import { ErrorBanner } from '../ui/states';
import { useUpdateTenant } from './queries';
import { SaveBar } from './SaveBar';

type Field = keyof IncidentSettings;
/** The API's bounds (tenants/routes.ts): a minute to a week. */
const MIN_MINUTES = 1;
const MAX_MINUTES = 10_080;

/** When a resolution is automation's, and when an incident a webhook opened closes by itself (docs/incidents.md, "Settings"). */
export function IncidentSettingsForm({ tenant }: { tenant: Tenant }) {
  const update = useUpdateTenant();
  const [values, setValues] = useState<Record<Field, string>>(() => ({
    automationWindowSeconds: minutesOf(tenant.incidents.automationWindowSeconds),
    quietSeconds: minutesOf(tenant.incidents.quietSeconds),
  }));
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const change = (field: Field, value: string) => {
    setValues((current) => ({ ...current, [field]: value }));
    setErrors((current) => ({ ...current, [field]: undefined }));
    setSaved(null);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBanner(null);
    const found = {
      automationWindowSeconds: wholeNumberError(values.automationWindowSeconds, MIN_MINUTES, MAX_MINUTES),
      quietSeconds: wholeNumberError(values.quietSeconds, MIN_MINUTES, MAX_MINUTES),
    };
    setErrors(found);
    if (found.automationWindowSeconds || found.quietSeconds) return;
    const incidents = { automationWindowSeconds: toNumber(values.automationWindowSeconds) * 60, quietSeconds: toNumber(values.quietSeconds) * 60 };
    update.mutate(
      { incidents },
      {
        onSuccess: (tenant) => setSaved(`Saved: ${describe(tenant.incidents)}.`),
        onError: (error) => {
          const problem = problemAtFields(error, fieldOf);
          setErrors(problem.errors);
          setBanner(problem.banner);
        },
      },
    );
  };

  return (
    <form className="panel" onSubmit={submit} noValidate aria-labelledby="incident-settings-heading">
      <EditableBy do="configure">
        <h2 id="incident-settings-heading">Incidents</h2>
        <p className="muted">
          An incident the tool resolves soon after a pitcrew fix of it succeeded counts as resolved by automation in the analytics. A webhook call has no
          &quot;resolved&quot;: the incident it opened closes once its alarm has been quiet this long.
        </p>
        <p className="banner banner-info" role="note">
          Now: {describe(tenant.incidents)}.
        </p>
        {banner ? <ErrorBanner error={banner} /> : null}
        <div className="field-row">
          <NumberField label="Automation window (minutes)" hint="after a fix of it ended" error={errors.automationWindowSeconds} value={values.automationWindowSeconds} onChange={(value) => change('automationWindowSeconds', value)} />
          <NumberField label="Quiet period (minutes)" hint="a webhook's incident closes after it" error={errors.quietSeconds} value={values.quietSeconds} onChange={(value) => change('quietSeconds', value)} />
        </div>
        <SaveBar label="Save incident settings" busy={update.isPending} saved={saved} />
      </EditableBy>
    </form>
  );
}

function fieldOf(path: string): Field | undefined {
  if (path.startsWith('/body/incidents/automationWindowSeconds')) return 'automationWindowSeconds';
  if (path.startsWith('/body/incidents/quietSeconds')) return 'quietSeconds';
  return undefined;
}

/** The API keeps seconds; a setting made elsewhere that is not whole minutes shows rounded up. */
function minutesOf(seconds: number): string {
  return String(Math.ceil(seconds / 60));
}

function describe(settings: IncidentSettings): string {
  return `a resolution within ${minutesOf(settings.automationWindowSeconds)} min of a fix is automation's; a webhook's incident closes after ${minutesOf(settings.quietSeconds)} min quiet`;
}
