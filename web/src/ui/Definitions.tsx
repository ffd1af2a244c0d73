import type { ReactNode } from 'react';

export type Definition = [label: string, value: ReactNode];

/** A row only when there is something to say: spread it into a list of definitions. */
export function optionalRow(label: string, value: ReactNode | null): Definition[] {
  return value === null ? [] : [[label, value]];
}

/** Label and value pairs: `settings` lays them out as rows, `facts` as a strip of tiles. */
export function Definitions({ items, layout = 'settings' }: { items: Definition[]; layout?: 'settings' | 'facts' }) {
  return (
    <dl className={layout}>
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
