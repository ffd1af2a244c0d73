/*
 * The scripts a new runbook or rule starts from. Every field of an alert is optional (a webhook
 * may send only HostName, or no body at all), and a script under `set -u` that reads a bare
 * $AlarmName of an alert without one fails ("AlarmName: parameter not set"), so each reads what
 * may be absent with a default. test/agents.test.ts runs them on a real agent, from a webhook
 * with only HostName and from one with no body. No imports: that test reads this file as it is.
 */

/** For an alert (a webhook, an integration): the fields it may carry, each with a default. */
export const SAMPLE_SCRIPT = [
  '#!/bin/sh',
  '# The alert arrives as environment: $HostName, $AlarmName, $Severity and each MetaData key, each only',
  "# when the alert has it: write ${AlarmName:-default} for one that may be absent (set -u stops at a bare one).",
  'set -eu',
  'echo "remediating ${AlarmName:-an alarm} (${Severity:-no severity}) on ${HostName:-this host}"',
  '',
].join('\n');

/** For a schedule: its tick's time and zone, which a run started by hand does not have. */
export const SCHEDULE_SAMPLE_SCRIPT = [
  '#!/bin/sh',
  "# Each tick gives its time as $PITCREW_SCHEDULED_TIME (UTC) and the rule's zone as $PITCREW_SCHEDULE_TIMEZONE.",
  'set -eu',
  'echo "tick of ${PITCREW_SCHEDULED_TIME:-now} on ${PITCREW_HOSTNAME:-this host}"',
  '',
].join('\n');

/** Where a CLI runbook starts: the credentials it may use arrive in each CLI's own variables. */
export const CLI_SAMPLE_SCRIPT = '#!/bin/sh\n# Runs on the CLI Machine with the credentials you pick: aws, az, gcloud, openstack read them from their own variables.\nset -eu\naws sts get-caller-identity\n';
