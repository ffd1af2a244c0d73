/** An alarm's state when its source says (firing or resolved). */
export type AlarmState = 'firing' | 'resolved';

/** A (rule, host)'s earlier alarms, as flapping protection needs them. */
export interface AlarmHistory {
  /** Alarms within the flapping window before this one. */
  recent: number;
  /** Changes between firing and resolved among them. */
  stateChanges: number;
  /** The latest earlier alarm within the look-back (the window or the cool-down, whichever is longer). */
  last: { at: number; suppressed: boolean; state: AlarmState | null } | null;
}

/** The history once this event is counted. */
export interface AlarmStep {
  recent: number;
  stateChanges: number;
  /** Whether this event's state differs from the last known one. */
  changed: boolean;
  /** The state known after this event: its own, or the last known one when it says none. */
  state: AlarmState | null;
  quietSeconds: number;
}

export function alarmStep(history: AlarmHistory, event: { alarmState?: AlarmState | undefined; receivedAt?: number }): AlarmStep {
  const previous = history.last?.state ?? null;
  const changed = event.alarmState !== undefined && previous !== null && event.alarmState !== previous;
  const quietSeconds = history.last && event.receivedAt !== undefined ? Math.max(0, event.receivedAt - history.last.at) / 1000 : Infinity;
  return {
    recent: history.recent + 1,
    stateChanges: history.stateChanges + (changed ? 1 : 0),
    changed,
    state: event.alarmState ?? previous,
    quietSeconds,
  };
}

/** The history the next event of the same (rule, host) in the same transaction sees. */
export function advance(history: AlarmHistory, event: { alarmState?: AlarmState | undefined; receivedAt: number }, suppressed: boolean): AlarmHistory {
  const step = alarmStep(history, event);
  return { recent: step.recent, stateChanges: step.stateChanges, last: { at: event.receivedAt, suppressed, state: step.state } };
}

export function describeHost(hostName: string | undefined): string {
  return hostName ? `host ${hostName}` : 'alarms naming no host';
}
