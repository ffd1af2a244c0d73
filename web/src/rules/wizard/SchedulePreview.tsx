import type { UseQueryResult } from '@tanstack/react-query';
import { messageOf } from '../../api/problem';
import type { SchedulePreview as Preview, SchedulePreviewInput } from '../../api/types';
import { scheduleInWords } from '../schedule';

/**
 * The next runs of the schedule being typed, as the service would fire them, on the wall clock of
 * its zone. `refused`: the service named what is wrong at the fields above, so nothing is listed.
 */
export function SchedulePreview({ input, preview, refused }: { input: SchedulePreviewInput | null; preview: UseQueryResult<Preview>; refused: boolean }) {
  const words = input ? scheduleInWords(input.schedule) : null;
  return (
    <section className="preview" aria-label="schedule preview" aria-live="polite" aria-busy={preview.isFetching}>
      <h3>Next runs</h3>
      {input === null ? (
        <p className="muted">Write a cron expression to see when it runs.</p>
      ) : refused ? (
        <p className="muted">Fix the schedule above to see when it runs.</p>
      ) : preview.isError ? (
        <p className="field-error">{messageOf(preview.error)}</p>
      ) : !preview.data ? (
        <p className="muted">Reading the schedule…</p>
      ) : preview.data.ticks.length === 0 ? (
        <p className="muted">This schedule has no run ahead.</p>
      ) : (
        <>
          <p>
            {words ? `${words[0]!.toUpperCase()}${words.slice(1)}, ` : ''}
            in <strong>{preview.data.timezone}</strong>:
          </p>
          <ol className={`ticks${preview.isPlaceholderData ? ' ticks-stale' : ''}`} aria-label="next runs" data-settled={!preview.isPlaceholderData}>
            {preview.data.ticks.map((tick) => (
              <li key={tick.at}>
                <time dateTime={tick.at}>{tick.local}</time>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
