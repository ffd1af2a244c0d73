import type { RunbookVersionView } from '../api/runbook-types';
import { INTERPRETER_LABELS } from '../rules/describe';
import { CodeBlock } from '../ui/CodeBlock';
import { Definitions, type Definition } from '../ui/Definitions';
import { Time } from '../ui/Time';
import { Markdown } from './Markdown';
import { EnvNames, Sha256 } from './RunbookFacts';

type Content = Pick<RunbookVersionView, 'version' | 'description' | 'interpreter' | 'script' | 'env' | 'sha256'> & { savedAt: string };

/** One version of a runbook as people read it: its notes, what runs, and how to tell it apart. `more` adds rows (who uses it). */
export function RunbookContent({ content, more = [] }: { content: Content; more?: Definition[] }) {
  return (
    <>
      <div className="columns">
        <section className="panel">
          <h2>Notes</h2>
          {content.description.trim() ? <Markdown source={content.description} /> : <p className="muted">No notes for people in this version.</p>}
        </section>
        <section className="panel">
          <h2>Version {content.version}</h2>
          <Definitions
            items={[
              ['Interpreter', INTERPRETER_LABELS[content.interpreter]],
              ['Expects', content.env.length === 0 ? <span className="muted">no variables named</span> : <EnvNames names={content.env} />],
              ['SHA-256', <Sha256 value={content.sha256} />],
              ['Saved', <Time iso={content.savedAt} />],
              ...more,
            ]}
          />
        </section>
      </div>
      <section className="panel">
        <h2>Script</h2>
        <CodeBlock code={content.script} copyLabel="Copy script" label="script" />
      </section>
    </>
  );
}
