import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { OUTCOMES, type Outcome, type RuleEvent, type TriggerType } from '../api/types';
import { OUTCOME_HELP, OutcomeBadge } from '../ui/Badge';
import { ExpandableRow, useOpenRow } from '../ui/ExpandableRow';
import { PagedList } from '../ui/PagedList';
import { EmptyState } from '../ui/states';
import { Time } from '../ui/Time';
import { useUrlFilters } from '../ui/useUrlFilters';
import { useRuleEvents } from './queries';
import { SnapshotThumb, useRuleSnapshots } from '../executions/Snapshots';
import { wallClock } from './schedule';
import { TableScroll } from '../ui/TableScroll';

const OUTCOME_EMPTY: Record<Outcome, string> = {
  accepted: 'No alarm of this rule has acted yet.',
  recorded: 'Every alert of this rule was in a state it acts on (trigger.on).',
  rule_off: 'No alarm came while the rule was off.',
  dry_run: 'No call has carried "Act": false.',
  no_target: 'Every alarm found a host to act on.',
  flapping: 'Flapping protection has not held back an alarm of this rule.',
  limited: 'The action limit has not stopped an alarm of this rule.',
  duplicate:
    "No monitoring tool re-sent an alert this rule already recorded. (A webhook retry with the same Idempotency-Key gets the original event's reply and is not stored again: the original event shows its key.)",
};

/** The rule's events, newest first, each with its outcome, payload and the names not exported. */
export function RuleEvents({ ruleId, triggerType }: { ruleId: string; triggerType?: TriggerType }) {
  const { params, set: setParam } = useUrlFilters();
  const outcome = (params.get('outcome') || undefined) as Outcome | undefined;
  const events = useRuleEvents(ruleId, outcome);
  return (
    <section className="panel">
      <h2 className="h2-with-tools">
        Events
        <select aria-label="Outcome" value={outcome ?? ''} onChange={(event) => setParam('outcome', event.target.value)}>
          <option value="">Every outcome</option>
          {OUTCOMES.map((value) => (
            <option key={value} value={value} title={OUTCOME_HELP[value]}>
              {value.replace('_', ' ')}
            </option>
          ))}
        </select>
      </h2>
      <PagedList
        query={events}
        what="events"
        empty={
          outcome ? (
            <EmptyState title={`No event with outcome ${outcome.replace('_', ' ')}`}>
              <p>{OUTCOME_EMPTY[outcome]}</p>
              <button type="button" className="button" onClick={() => setParam('outcome', '')}>
                Show every outcome
              </button>
            </EmptyState>
          ) : (
            <EmptyState title="No events yet">
              {triggerType === 'cron' ? 'Each tick of the schedule is recorded here, with what it did.' : 'Fire the webhook (the curl above) and its event shows here within seconds.'}
            </EmptyState>
          )
        }
      >
        {(items) => <EventsTable events={items} ruleId={ruleId} />}
      </PagedList>
    </section>
  );
}

function EventsTable({ events, ruleId }: { events: RuleEvent[]; ruleId: string }) {
  const snapshots = useRuleSnapshots(ruleId, 50).data?.items ?? [];
  // A link to #event-<id> (from an execution, or the schedule's last tick) opens that event and shows it.
  const { hash } = useLocation();
  const linked = hash.startsWith('#event-') ? hash.slice(7) : null;
  const { open, setOpen, toggle } = useOpenRow(linked);
  const [followed, setFollowed] = useState(linked);
  if (linked !== followed) {
    setFollowed(linked);
    if (linked) setOpen(linked);
  }
  useEffect(() => {
    if (linked) document.getElementById(`event-${linked}`)?.scrollIntoView({ block: 'center' });
  }, [linked]);
  // A column of dashes says nothing (a schedule's ticks name no host; most payloads export every name).
  // A narrow window shows the host under the outcome instead (CSS: .table-events), so the reason keeps its room.
  const hostColumn = events.some((event) => hostOf(event) !== undefined);
  const skippedColumn = events.some((event) => event.skippedEnv.length > 0);
  return (
    <TableScroll>
      <table className="table table-events">
        <thead>
          <tr>
            <th>Received</th>
            <th>Outcome</th>
            {hostColumn ? <th className="col-host">Host</th> : null}
            <th>Reason</th>
            {skippedColumn ? <th>Not exported</th> : null}
            <th>Executions</th>
            <th aria-label="details" />
          </tr>
        </thead>
        <tbody>
          {events.map((event) => {
            const expanded = open === event.id;
            const host = hostOf(event);
            return (
              <ExpandableRow
                key={event.id}
                open={expanded}
                detail={<EventDetail event={event} />}
                columns={5 + Number(hostColumn) + Number(skippedColumn)}
                detailClassName="row-detail"
              >
                <tr id={`event-${event.id}`} data-outcome={event.outcome} className={expanded ? 'row-expanded' : undefined}>
                  <td>
                    <Time iso={event.receivedAt} />
                  </td>
                  <td>
                    <OutcomeBadge outcome={event.outcome} />
                    {host === undefined ? null : <div className="event-host mono">{host}</div>}
                  </td>
                  {hostColumn ? <td className="mono col-host">{host ?? <span className="muted">–</span>}</td> : null}
                  <td className="cell-reason">
                    <EventReason event={event} />
                  </td>
                  {skippedColumn ? (
                    <td>
                      {event.skippedEnv.length === 0 ? (
                        <span className="muted">–</span>
                      ) : (
                        event.skippedEnv.map((skipped) => (
                          <span key={skipped.name} className="chip chip-warn" title={skipped.reason}>
                            {skipped.name}
                          </span>
                        ))
                      )}
                    </td>
                  ) : null}
                  <td>
                    {event.executionIds.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      <>
                        {event.executionIds.map((id) => (
                          <Link key={id} to={`/executions/${id}`} className="mono exec-link">
                            {id.slice(-8)}
                          </Link>
                        ))}
                        {snapshots.filter((snapshot) => snapshot.eventId === event.id).slice(0, 2).map((snapshot) => (
                          <SnapshotThumb key={snapshot.id} snapshot={snapshot} />
                        ))}
                        {event.executionCount > event.executionIds.length ? (
                          <Link to={`/executions?event=${event.id}`} className="exec-link">
                            all {event.executionCount}
                          </Link>
                        ) : null}
                      </>
                    )}
                  </td>
                  <td>
                    <button type="button" className="link-button" aria-expanded={expanded} onClick={() => toggle(event.id)}>
                      {expanded ? 'Hide' : 'Payload'}
                    </button>
                  </td>
                </tr>
              </ExpandableRow>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** What an event brought: its payload as posted, the runbook's environment, the names not exported, where it came from. */
function EventDetail({ event }: { event: RuleEvent }) {
  return (
    <div className="event-detail">
      <div>
        <h4>Payload as posted</h4>
        <pre>{JSON.stringify(event.payload, null, 2)}</pre>
      </div>
      <div>
        <h4>Environment of the runbook</h4>
        <pre>{Object.entries(event.env).map(([name, value]) => `${name}=${value}`).join('\n') || '(none)'}</pre>
        {event.skippedEnv.length > 0 ? (
          <>
            <h4>Not exported</h4>
            <ul>
              {event.skippedEnv.map((skipped) => (
                <li key={skipped.name}>
                  <code>{skipped.name}</code>: {skipped.reason}
                </li>
              ))}
            </ul>
          </>
        ) : null}
        <p className="muted">
          {event.source === 'manual' ? 'Run now · ' : ''}From {event.sourceIp ?? (event.source === 'cron' ? 'the schedule' : 'an unknown address')} · event {event.id}
          {event.idempotencyKey ? ` · Idempotency-Key ${event.idempotencyKey}` : ''}
        </p>
      </div>
    </div>
  );
}

/**
 * Why the event did what it did. A tick of the schedule that ran has no reason of its own: it says
 * which tick it was, on the zone's clock; its idempotency key (the service's, "cron:<ms>") is in
 * the tooltip and the details. The Idempotency-Key a caller sent is shown: it is theirs to match.
 */
function EventReason({ event }: { event: RuleEvent }) {
  if (event.source === 'cron') {
    const tick = typeof event.payload.scheduledTime === 'string' ? event.payload.scheduledTime : event.receivedAt;
    const zone = typeof event.payload.timezone === 'string' ? event.payload.timezone : 'UTC';
    // A schedule of five fields ticks on whole minutes: its seconds say nothing.
    const minutes = typeof event.payload.schedule === 'string' && event.payload.schedule.trim().split(/\s+/).length === 5;
    return (
      <span data-tick={tick} title={event.idempotencyKey ? `Idempotency-Key ${event.idempotencyKey}: the tick is stored once, whichever node saw it` : undefined}>
        {event.reason ?? <TickWords iso={tick} zone={zone} minutes={minutes} />}
      </span>
    );
  }
  return (
    <>
      {event.reason ?? ''}
      {event.requestedBy ? (
        <div className="cell-key" title="raised from the rule's page or the CLI (source manual), not by its trigger">
          Run now by token <code>{event.requestedBy.name}</code>
        </div>
      ) : null}
      {event.idempotencyKey ? (
        <div className="cell-key" title="a retry with this key within 24 h gets this event's reply and runs nothing">
          Idempotency-Key <code>{event.idempotencyKey}</code>
        </div>
      ) : null}
    </>
  );
}

/** "cron tick 2026-11-28 06:00 UTC": the tick on its zone's clock, broken only between date and time. */
function TickWords({ iso, zone, minutes }: { iso: string; zone: string; minutes: boolean }) {
  const clock = wallClock(iso, zone);
  const [date, ...time] = (minutes ? clock.replace(/(\d\d:\d\d):\d\d/, '$1') : clock).split(' ');
  return (
    <>
      cron tick <span className="nowrap">{date}</span> <span className="nowrap">{time.join(' ')}</span>
    </>
  );
}

/** The host the payload names, if it names one. */
function hostOf(event: RuleEvent): string | undefined {
  const host = event.payload.HostName ?? event.payload.hostname;
  return typeof host === 'string' ? host : undefined;
}
