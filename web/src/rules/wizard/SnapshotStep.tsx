import { useMutation } from '@tanstack/react-query';
import { api } from '../../api/client';
import { messageOf } from '../../api/problem';
import type { SnapshotPreview } from '../../api/types';
import { useIntegrations } from '../../integrations/queries';
import { TOOLS } from '../../integrations/tools';
import { bytes } from '../../ui/format';
import { Field } from '../../ui/Field';
import { graphsOf, snapshotIntegrationOf } from './snapshot-form';
import type { StepProps } from './step';

/** The action step of a graph_snapshot rule: what to capture, and a Preview of it. */
export function SnapshotStep(props: StepProps) {
  return (
    <>
      <p className="step-intro">
        When the alert arrives, pitcrew reads its graph from the monitoring tool and keeps the picture with the execution: the execution, event
        and rule pages show it, e-mails carry it, chat messages link to it.
      </p>
      <SnapshotFieldset {...props} />
    </>
  );
}

/** On a script, cloud or CLI action: "capture graphs too", a graph_snapshot beside the fix that never delays nor fails it. */
export function CaptureGraphsToo(props: StepProps) {
  const { form, update } = props;
  return (
    <fieldset className="snapshot-option">
      <legend>Graph snapshot</legend>
      <label className="checkbox">
        <input type="checkbox" checked={form.snapshotEnabled} onChange={(event) => update({ snapshotEnabled: event.target.checked })} />
        <span>Capture graphs too: the alert's graph from the monitoring tool, kept with this run as its before-picture</span>
      </label>
      {form.snapshotEnabled ? <SnapshotFieldset {...props} /> : null}
    </fieldset>
  );
}

function SnapshotFieldset({ form, update, errors }: StepProps) {
  const integrations = useIntegrations();
  const fromTrigger = form.trigger.type === 'alert' && form.trigger.integrationId;
  return (
    <div className="snapshot-fields">
      <Field label="Integration" error={errors.snapshotIntegrationId} hint={fromTrigger ? 'Empty: the alert trigger’s integration.' : 'The monitoring tool whose graphs are read.'}>
        <select value={form.snapshotIntegrationId} onChange={(event) => update({ snapshotIntegrationId: event.target.value })}>
          <option value="">{fromTrigger ? 'The alert trigger’s integration' : 'Choose an integration…'}</option>
          {(integrations.data?.items ?? []).map((integration) => (
            <option key={integration.id} value={integration.id}>
              {integration.name} ({TOOLS[integration.type].title})
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Graphs, one per line"
        error={errors.snapshotGraphs}
        hint={<>In the tool’s terms: a PromQL query, a Grafana panel, a metric. <code>{'{{ $labels.instance }}'}</code> takes the alert’s label. Empty: the alert’s own graph.</>}
      >
        <textarea className="mono" rows={3} value={form.snapshotGraphs} onChange={(event) => update({ snapshotGraphs: event.target.value })} />
      </Field>
      <Field label="Window (minutes)" error={errors.snapshotWindowMinutes} hint="Drawn before the alert’s start and after it, up to now.">
        <input inputMode="numeric" value={form.snapshotWindowMinutes} onChange={(event) => update({ snapshotWindowMinutes: event.target.value })} />
      </Field>
      <SnapshotPreviewButton integrationId={snapshotIntegrationOf(form)} graphs={graphsOf(form)} />
    </div>
  );
}

/** Captures now, over the last hour, without saving: the picture the rule would keep. */
function SnapshotPreviewButton({ integrationId, graphs }: { integrationId: string | undefined; graphs: string[] }) {
  const preview = useMutation({
    mutationFn: () => api<{ images: SnapshotPreview[] }>('/snapshots/preview', { method: 'POST', body: { integrationId, graphs, windowMinutes: 60 } }),
  });
  return (
    <div className="snapshot-preview">
      <button type="button" className="button" disabled={!integrationId || preview.isPending} onClick={() => preview.mutate()}>
        {preview.isPending ? 'Capturing…' : 'Preview'}
      </button>
      <span className="field-hint">Captures the last hour now, without saving{graphs.length === 0 ? '; with no graph written, the tool has no alert to take one from' : ''}.</span>
      {preview.error ? <p className="banner banner-error">{messageOf(preview.error)}</p> : null}
      {preview.data ? (
        <ul className="snapshot-list" aria-label="Preview">
          {preview.data.images.map((image, index) => (
            <li key={index}>
              <figure className="snapshot">
                <img src={image.dataUrl} alt={`preview: ${image.title}`} width={image.width} height={image.height} />
                <figcaption>
                  <strong>{image.title}</strong>
                  <span className="muted">
                    {image.width}×{image.height} · {bytes(image.bytes)}
                  </span>
                </figcaption>
              </figure>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
