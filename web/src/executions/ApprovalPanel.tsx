import { useState } from 'react';
import { Can } from '../auth/useRole';
import { messageOf } from '../api/problem';
import type { Execution } from '../api/types';
import { Field } from '../ui/Field';
import { Time } from '../ui/Time';
import { useDecideExecution, type ApprovalLink } from './queries';

/**
 * An execution waiting for a person's yes (docs/approvals.md): who may decide and until when,
 * and for those who may, Approve and Reject with a comment kept in its history. What would run
 * and where is the rest of the page (the host in the title, the runbook, the event).
 */
export function ApprovalPanel({ execution, link }: { execution: Execution; link?: ApprovalLink }) {
  const decide = useDecideExecution();
  const [comment, setComment] = useState('');
  const approval = execution.approval;
  if (execution.state !== 'awaiting_approval' || !approval) return null;
  const send = (verdict: 'approve' | 'reject') => decide.mutate({ id: execution.id, verdict, comment, link });
  return (
    <section className="panel" aria-label="approval">
      <h2>Waiting for approval</h2>
      <p>
        Nothing has been sent to {execution.hostId ? `the agent on ${execution.hostname}` : 'the service'} yet. {article(approval.role)} {approval.role} or above
        decides; past <Time iso={approval.deadline} /> it {approval.onTimeout === 'escalate' ? 'expires and on-call is told' : 'expires and never runs'}.
      </p>
      <Can do="operate" otherwise={<p className="muted">Your role may not decide.</p>}>
        <Field label="Comment (optional)" hint="Kept in the execution's history and the audit log.">
          <textarea value={comment} onChange={(event) => setComment(event.target.value)} rows={2} maxLength={2000} />
        </Field>
        {decide.error ? <p className="banner banner-error" role="alert">{messageOf(decide.error)}</p> : null}
        <div className="form-actions">
          <button type="button" className="button button-primary" disabled={decide.isPending} onClick={() => send('approve')}>Approve</button>
          <button type="button" className="button button-danger" disabled={decide.isPending} onClick={() => send('reject')}>Reject</button>
        </div>
      </Can>
    </section>
  );
}

function article(role: string): string {
  return /^[aeiou]/.test(role) ? 'An' : 'A';
}
