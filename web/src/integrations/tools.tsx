import type { ReactNode } from 'react';
import type { IntegrationType } from '../api/integration-types';
import { CodeBlock } from '../ui/CodeBlock';
import { ZabbixMediaType } from './ZabbixMediaType';

/** What the page says of each tool: its name, what it sends, and whether it takes a secret. */
export const TOOLS: Record<IntegrationType, { title: string; text: string; secret?: string }> = {
  alertmanager: { title: 'Prometheus Alertmanager', text: 'Webhook receiver (message version 4): each alert of a group is its own alarm.' },
  grafana: { title: 'Grafana alerting', text: 'Webhook contact point, optionally HMAC-signed.', secret: 'HMAC signing secret (optional)' },
  monasca: { title: 'OpenStack Monasca', text: 'Webhook notification on your alarm definitions; pitcrew reads the definitions with a Keystone token.', secret: 'Keystone token (or get one below)' },
  zabbix: { title: 'Zabbix', text: 'The pitcrew webhook media type, imported into Zabbix.', secret: 'Shared secret for the media type (optional)' },
  datadog: { title: 'Datadog', text: 'Webhooks integration, with its default payload.', secret: 'Shared secret header (optional)' },
  pagerduty: { title: 'PagerDuty', text: 'Generic Webhooks (v3) on incidents, signature verified.', secret: 'Webhook signing secret (optional, recommended)' },
  cloudwatch_sns: { title: 'AWS CloudWatch (SNS)', text: 'An HTTPS subscription of the SNS topic your alarms notify; signatures verified.' },
  generic: { title: 'Generic JSON', text: 'Any tool that posts JSON, read through a field mapping you give.' },
};

const Steps = ({ children }: { children: ReactNode }) => <ol className="setup-steps">{children}</ol>;

/** The steps to set the tool up, written for that tool, with pitcrew's URL where it goes. */
export function SetupSteps({ type, url }: { type: IntegrationType; url: string }) {
  switch (type) {
    case 'alertmanager':
      return (
        <Steps>
          <li>
            Add a receiver to <code>alertmanager.yml</code> and route the alerts pitcrew should act on to it:
            <CodeBlock code={alertmanagerSnippet(url)} copyLabel="Copy receiver" label="Alertmanager receiver" lines />
          </li>
          <li>
            Reload Alertmanager (<code>kill -HUP</code> or <code>POST /-/reload</code>). Leave the receiver&apos;s <code>payload</code> unset:
            pitcrew reads Alertmanager&apos;s own body.
          </li>
          <li>Send a test alert below, then make a rule with the trigger “Monitoring alert” on this integration.</li>
        </Steps>
      );
    case 'grafana':
      return (
        <Steps>
          <li>
            In Grafana: <strong>Alerting → Contact points → Add contact point</strong>, integration <strong>Webhook</strong>, URL: this
            integration&apos;s URL, method <code>POST</code>. Leave the custom payload empty.
          </li>
          <li>
            Optional, recommended: under <strong>HMAC Signature</strong> set the same secret as this integration&apos;s, and a timestamp header
            such as <code>X-Grafana-Alerting-Timestamp</code> (set it as <code>timestampHeader</code> in the integration&apos;s config).
          </li>
          <li>
            Route alerts to the contact point with a <strong>notification policy</strong>. Resolved alerts are sent unless “Disable resolved
            message” is ticked.
          </li>
        </Steps>
      );
    case 'monasca':
      return (
        <Steps>
          <li>Below, get a token from Keystone (or paste one as the secret) and set the Monasca API URL, so pitcrew can show your alarm definitions.</li>
          <li>
            In Horizon: <strong>Monitoring → Notifications → Create Notification</strong>. Name <code>pitcrew</code>, Type <strong>Webhook</strong>,
            Address: this integration&apos;s URL, Period <code>0</code>. <strong>Create</strong>.
          </li>
          <li>
            <strong>Monitoring → Alarm Definitions → Edit Alarm Definition</strong> → add the notification: choose <code>pitcrew</code> in
            Select Notification, <strong>Add</strong>, keep Alarm ticked (and OK for rules on resolution). Save. Do this for every alarm
            definition; the list below shows which already notify pitcrew.
          </li>
        </Steps>
      );
    case 'zabbix':
      return (
        <Steps>
          <li>
            <ZabbixMediaType /> In Zabbix: <strong>Administration → Media types → Import</strong> (6.4 and later: <strong>Alerts → Media types</strong>).
          </li>
          <li>
            Open the media type <code>pitcrew</code>: set <code>pitcrew_url</code> to this integration&apos;s URL (and <code>pitcrew_secret</code> to
            its secret, if it has one). Enable it.
          </li>
          <li>
            Give a user the media (<strong>Media → Add</strong>, type <code>pitcrew</code>), and send to that user from a trigger action, with a
            recovery operation so pitcrew learns of recoveries.
          </li>
        </Steps>
      );
    case 'datadog':
      return (
        <Steps>
          <li>
            In Datadog: the <strong>Webhooks</strong> integration tile → <strong>New</strong>. Name <code>pitcrew</code>, URL: this integration&apos;s
            URL. Keep the default payload and leave “Encode as form” unchecked.
          </li>
          <li>
            Add <code>@webhook-pitcrew</code> to the message of each monitor pitcrew should act on.
          </li>
        </Steps>
      );
    case 'pagerduty':
      return (
        <Steps>
          <li>
            In PagerDuty: <strong>Integrations → Generic Webhooks (v3) → New Webhook</strong>. Webhook URL: this integration&apos;s URL; scope
            the service or team; subscribe to <code>incident.triggered</code>, <code>incident.reopened</code> and <code>incident.resolved</code>.
          </li>
          <li>Copy the signing secret PagerDuty shows once into this integration&apos;s secret: every request is then verified.</li>
          <li>
            <strong>Send Test Event</strong> in PagerDuty sends a ping, which pitcrew answers without acting.
          </li>
        </Steps>
      );
    case 'cloudwatch_sns':
      return (
        <Steps>
          <li>
            In AWS: <strong>Amazon SNS → Topics</strong>, the topic your alarms notify → <strong>Create subscription</strong>, protocol{' '}
            <strong>HTTPS</strong>, endpoint: this integration&apos;s URL. pitcrew must be reachable from the internet with a public certificate.
          </li>
          <li>pitcrew verifies the SubscriptionConfirmation&apos;s signature and confirms it: the subscription shows Confirmed within seconds.</li>
          <li>
            In <strong>CloudWatch → Alarms</strong>, each alarm: <strong>Edit → Configure actions</strong>, <em>In alarm</em> → the topic (and{' '}
            <em>OK</em> for rules on resolution).
          </li>
        </Steps>
      );
    case 'generic':
      return (
        <Steps>
          <li>
            Point the tool at this integration&apos;s URL: <code>POST</code>, <code>Content-Type: application/json</code>.
          </li>
          <li>
            The integration&apos;s <code>mapping</code> (its config) says where each field is in the tool&apos;s JSON: name, host, severity, state,
            fingerprint (see the docs, <code>docs/integrations/generic.md</code>).
          </li>
        </Steps>
      );
  }
}

/** Alertmanager's receiver for pitcrew (docs/integrations/alertmanager.md): send_resolved for rules on resolution, every alert of a group. */
export function alertmanagerSnippet(url: string): string {
  return [
    'route:',
    '  routes:',
    '    - receiver: pitcrew',
    "      matchers: ['remediate=\"true\"']   # the alerts pitcrew should see",
    'receivers:',
    '  - name: pitcrew',
    '    webhook_configs:',
    `      - url: '${url}'`,
    '        send_resolved: true',
    '        max_alerts: 0',
  ].join('\n');
}
