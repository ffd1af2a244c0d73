import { useEffect, useRef, type KeyboardEvent, type ReactNode, type SyntheticEvent } from 'react';

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  /**
   * Given, the dialog never closes by itself: Escape (and the browser's own close requests) call
   * this instead, and only `open` becoming false closes it.
   */
  onDismiss?: () => void;
  children: ReactNode;
  wide?: boolean;
}

/**
 * A modal on the native <dialog>: focus moves into it and stays, Escape closes it (or asks, with
 * `onDismiss`), and the page behind is inert, without a library.
 */
export function Dialog({ open, title, onClose, onDismiss, children, wide }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const shouldBeOpen = useRef(open);
  useEffect(() => {
    shouldBeOpen.current = open;
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const onCancel = (event: SyntheticEvent<HTMLDialogElement>) => {
    if (!onDismiss) return;
    event.preventDefault();
    onDismiss();
  };
  // Escape is taken before it becomes a close request: Chromium honours a cancelled `cancel` only
  // once per click, and would close the dialog on the next Escape.
  const onKeyDown = (event: KeyboardEvent<HTMLDialogElement>) => {
    if (!onDismiss || event.key !== 'Escape') return;
    event.preventDefault();
    onDismiss();
  };
  const onClosed = () => {
    const dialog = ref.current;
    // Any other close request (a phone's back gesture) may close it whatever the cancel handler
    // says (Chromium's close-watcher abuse guard): a guarded dialog opens again at once.
    if (onDismiss && shouldBeOpen.current && dialog) {
      dialog.showModal();
      onDismiss();
      return;
    }
    onClose();
  };
  return (
    <dialog ref={ref} className={`dialog${wide ? ' dialog-wide' : ''}`} onCancel={onCancel} onKeyDown={onKeyDown} onClose={onClosed} aria-labelledby="dialog-title">
      {open && (
        <>
          <h2 id="dialog-title">{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}
