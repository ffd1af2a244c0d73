import { Link } from 'react-router';
import type { Rule } from '../api/types';
import { OutcomeBadge } from '../ui/Badge';
import { Definitions, optionalRow } from '../ui/Definitions';
import { relativeTime } from '../ui/format';
import { useNow } from '../ui/useNow';
import { OVERLAPS, scheduleInWords, wallClock } from './schedule';

/**
 * A cron rule's schedule: the expression, its zone and overlap, the last tick (the rule's newest
 * event) and the next ones, on the wall clock of the rule's zone. It reads the rule's own query,
 * so it follows a pause or resume as soon as the rule is refetched.
 */
export function SchedulePanel({ rule }: { rule: Rule }) {
  const now = useNow();
  const { trigger, schedule, lastEvent } = rule;
  if (trigger.type !== 'cron') return null;
  const zone = trigger.timezone ?? 'UTC';
  const overlap = OVERLAPS[trigger.overlap ?? 'skip'] ?? OVERLAPS.skip;
  const nextTicks = schedule?.nextTicks ?? [];
  const waitingTick = schedule?.waitingTick ?? null;
  return (
    <section className="panel" aria-label="schedule">
      <h2>Schedule</h2>
      <Definitions
        items={[
          ['Expression', <code>{trigger.schedule}</code>],
          ...optionalRow('Runs', scheduleInWords(trigger.schedule ?? '')),
          ['Time zone', zone],
          [
            'Overlap',
            <>
              <code>{trigger.overlap ?? 'skip'}</code> <span className="muted">{overlap.text}</span>
            </>,
          ],
          [
            'Last tick',
            lastEvent ? (
              <span data-last-tick={lastEvent.outcome}>
                <Link to={`#event-${lastEvent.id}`}>
                  <time dateTime={lastEvent.receivedAt}>{wallClock(lastEvent.receivedAt, zone)}</time>
                </Link>{' '}
                <OutcomeBadge outcome={lastEvent.outcome} /> <span className="muted">{relativeTime(lastEvent.receivedAt, now)}</span>
              </span>
            ) : (
              <span className="muted">none yet</span>
            ),
          ],
        ]}
      />
      <h3>Next ticks</h3>
      {!rule.enabled ? (
        <p className="ticks-paused" data-ticks="paused">
          <strong>Paused: no ticks.</strong> Turned on, it starts from the next tick after that moment; the ticks it missed are not run.
        </p>
      ) : nextTicks.length === 0 ? (
        <p className="muted" data-ticks="none">
          No tick ahead: the schedule has no further run time.
        </p>
      ) : (
        <ol className="ticks" aria-label="next ticks">
          {nextTicks.map((iso) => (
            <li key={iso}>
              <time dateTime={iso}>{wallClock(iso, zone)}</time> <span className="muted">{relativeTime(iso, now)}</span>
            </li>
          ))}
        </ol>
      )}
      {waitingTick ? (
        <p data-waiting-tick={waitingTick}>
          <strong>Waiting:</strong> the tick of <time dateTime={waitingTick}>{wallClock(waitingTick, zone)}</time> runs once the previous run ends
          (overlap queue).
        </p>
      ) : null}
    </section>
  );
}

