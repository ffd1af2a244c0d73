import type { ChannelStatus } from '../api/channel-types';
import type { ExecutionState, Outcome } from '../api/types';

type Tone = 'good' | 'bad' | 'warn' | 'info' | 'neutral';

const STATE_TONES: Record<ExecutionState, Tone> = {
  awaiting_approval: 'warn',
  queued: 'neutral',
  dispatched: 'info',
  running: 'info',
  succeeded: 'good',
  failed: 'bad',
  timed_out: 'bad',
  cancelled: 'neutral',
  lost: 'warn',
  expired: 'warn',
  rejected: 'neutral',
};

const OUTCOME_TONES: Record<Outcome, Tone> = {
  accepted: 'good',
  recorded: 'neutral',
  rule_off: 'neutral',
  dry_run: 'info',
  no_target: 'warn',
  flapping: 'warn',
  limited: 'warn',
  duplicate: 'neutral',
};

export const OUTCOME_HELP: Record<Outcome, string> = {
  accepted: 'an action was queued for each target',
  recorded: "the alert's state is not one the rule acts on (trigger.on): recorded, no action ran",
  rule_off: 'the rule was off: recorded, no action ran',
  dry_run: 'Act was false: recorded, no action ran',
  no_target: 'no host matched the target',
  flapping: 'suppressed by flapping protection',
  limited: 'the action limit was reached',
  duplicate: 'a repeat of an event already recorded',
};

function Badge({ tone, label, title, pulse }: { tone: Tone; label: string; title?: string; pulse?: boolean }) {
  return (
    <span className={`badge badge-${tone}${pulse ? ' badge-pulse' : ''}`} title={title}>
      {label.replace('_', ' ')}
    </span>
  );
}

export function StateBadge({ state }: { state: ExecutionState }) {
  return <Badge tone={STATE_TONES[state]} label={state} pulse={state === 'running' || state === 'dispatched'} />;
}

export function OutcomeBadge({ outcome }: { outcome: Outcome }) {
  return <Badge tone={OUTCOME_TONES[outcome]} label={outcome} title={OUTCOME_HELP[outcome]} />;
}

const ESCALATION_TONES: Record<string, Tone> = { pending: 'warn', notified: 'neutral' };

const ESCALATION_TITLES: Record<string, string> = { pending: 'waiting to be delivered to a person', notified: 'sent to the escalation contacts and channels' };

export function EscalationBadge({ state }: { state: string }) {
  return <Badge tone={ESCALATION_TONES[state] ?? 'neutral'} label={state} title={ESCALATION_TITLES[state]} />;
}

/** An alarm for this host would not act now: the action limit is used up. */
export function LimitedBadge({ onLimit }: { onLimit: 'escalate' | 'drop' | undefined }) {
  return <Badge tone="bad" label="limited" title={onLimit === 'drop' ? 'the next alarm on this host is dropped' : 'the next alarm on this host is escalated to a person'} />;
}

/** A queued execution of a fan-out that waits for a slot of its maxConcurrency. */
export function HeldBadge() {
  return <Badge tone="info" label="held" title="waiting for its turn: the fan-out runs a few hosts at a time" />;
}

const SCOPE_TITLES: Record<string, string> = {
  webhook: 'fires webhook triggers: the key in monitoring tools\' URLs',
  enrol: 'enrols agents: takes a host name and its jobs',
};

export function ScopeBadge({ scope }: { scope: string }) {
  return <Badge tone={scope === 'enrol' ? 'warn' : 'info'} label={scope} title={SCOPE_TITLES[scope]} />;
}

export function StatusDot({ online }: { online: boolean }) {
  return (
    <span className={`dot ${online ? 'dot-online' : 'dot-offline'}`} role="img" aria-label={online ? 'online' : 'offline'} title={online ? 'online' : 'offline'} />
  );
}

const CHANNEL_TONES: Record<ChannelStatus, Tone> = { ok: 'good', failing: 'bad', never_used: 'neutral', disabled: 'neutral' };

export function ChannelStatusBadge({ status, title }: { status: ChannelStatus; title?: string }) {
  return <Badge tone={CHANNEL_TONES[status]} label={status} title={title} />;
}

export function AttemptBadge({ ok }: { ok: boolean }) {
  return <Badge tone={ok ? 'good' : 'bad'} label={ok ? 'delivered' : 'failed'} />;
}

/** A credential's last test: the provider accepted it, refused it, or it was never tested. */
export function CredentialTestBadge({ ok }: { ok: boolean | null }) {
  if (ok === null) return <Badge tone="neutral" label="not tested" />;
  return <Badge tone={ok ? 'good' : 'bad'} label={ok ? 'ok' : 'failed'} title={ok ? 'the provider accepted the credential' : 'the provider refused the credential, or did not answer'} />;
}
