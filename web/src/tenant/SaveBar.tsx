import type { ReactNode } from 'react';

interface SaveBarProps {
  label: string;
  busy: boolean;
  disabled?: boolean;
  /** What the last save did, said once it is done. */
  saved: string | null;
  /** Buttons before the save button. */
  children?: ReactNode;
}

/** The foot of a settings form: its other buttons, what was saved, and the submit button. */
export function SaveBar({ label, busy, disabled, saved, children }: SaveBarProps) {
  return (
    <div className="form-actions">
      {children}
      <span className="spacer" />
      {saved ? (
        <span className="saved" role="status">
          {saved}
        </span>
      ) : null}
      <button type="submit" className="button button-primary" disabled={disabled || busy}>
        {busy ? 'Saving…' : label}
      </button>
    </div>
  );
}
