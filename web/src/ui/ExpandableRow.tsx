import { useState, type ReactNode } from 'react';

interface ExpandableRowProps {
  /** The row itself (a `<tr>`), holding the button that opens it. */
  children: ReactNode;
  open: boolean;
  /** What opens under the row, in one cell across the table's `columns`. */
  detail: ReactNode;
  columns: number;
  detailClassName: string;
}

/** A table row with a detail row that opens under it. */
export function ExpandableRow({ children, open, detail, columns, detailClassName }: ExpandableRowProps) {
  return (
    <>
      {children}
      {open ? (
        <tr className={detailClassName}>
          <td colSpan={columns}>{detail}</td>
        </tr>
      ) : null}
    </>
  );
}

/** Which row of a table is open (one at a time, or none): `toggle` opens a row, or closes it when it is the open one. */
export function useOpenRow(initial: string | null = null) {
  const [open, setOpen] = useState<string | null>(initial);
  const toggle = (id: string) => setOpen((current) => (current === id ? null : id));
  return { open, setOpen, toggle };
}
