import { useState, type ReactNode } from 'react';
import { ConfirmDialog } from './ConfirmDialog';

interface ConfirmedActionProps {
  /** The button that asks for confirmation, and its class. */
  label: string;
  buttonClassName: string;
  title: string;
  confirmLabel: string;
  /** The mutation the action runs: its progress and refusal show in the dialog. */
  mutation: { isPending: boolean; error: unknown };
  /** Runs the action; `close` ends the dialog (call it on success). */
  onConfirm: (close: () => void) => void;
  /** What will happen, said plainly. */
  children: ReactNode;
}

/** A button for an action with consequences: it runs only after a dialog says what it does. */
export function ConfirmedAction({ label, buttonClassName, title, confirmLabel, mutation, onConfirm, children }: ConfirmedActionProps) {
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <button type="button" className={buttonClassName} onClick={() => setConfirming(true)}>
        {label}
      </button>
      <ConfirmDialog
        open={confirming}
        title={title}
        confirmLabel={confirmLabel}
        danger
        busy={mutation.isPending}
        error={mutation.error}
        onCancel={() => setConfirming(false)}
        onConfirm={() => onConfirm(() => setConfirming(false))}
      >
        {children}
      </ConfirmDialog>
    </>
  );
}
