import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Field } from '../../ui/Field';
import { NamedOptions } from '../../ui/Options';

interface ListPickerProps {
  label: string;
  /** The list asked of the service, as its failure names it ("repositories"). */
  what: string;
  list: { isPending: boolean; isSuccess: boolean; isError: boolean };
  items: Array<{ id: string; name: string }>;
  value: string;
  /** The empty choice's words ("Choose a repository"). */
  choose: string;
  /** The noun a chosen id no longer listed keeps its place under ("repository"); without it, that id is not shown chosen. */
  unlisted?: string;
  /** Said when the list is empty ("No repository is connected yet. "). */
  none: string;
  /** Where one is made: its page, opened in a new tab so the wizard keeps what was typed. */
  make: { to: string; label: ReactNode };
  /** Said after the hint (the chosen one's last test). */
  more?: ReactNode;
  error: string | undefined;
  onChange: (id: string) => void;
}

/** One of the tenant's things, picked by name from the list the service gives (a repository, a runbook, a credential). */
export function ListPicker({ label, what, list, items, value, choose, unlisted, none, make, more, error, onChange }: ListPickerProps) {
  const listed = items.some((item) => item.id === value);
  const hint = (
    <>
      {list.isSuccess && items.length === 0 ? none : null}
      <Link to={make.to} target="_blank" rel="noopener">
        {make.label}
      </Link>{' '}
      (opens in a new tab; this list refreshes when you come back).
      {more}
    </>
  );
  return (
    <Field label={label} error={error ?? (list.isError ? `could not list the ${what}: reload to try again` : undefined)} hint={hint}>
      <select value={listed || unlisted ? value : ''} onChange={(event) => onChange(event.target.value)}>
        <option value="">{list.isPending ? 'Loading…' : choose}</option>
        {unlisted && value && !listed && list.isSuccess ? (
          <option value={value}>
            {unlisted} {value} (no longer listed)
          </option>
        ) : null}
        <NamedOptions items={items} />
      </select>
    </Field>
  );
}
