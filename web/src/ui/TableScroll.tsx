import type { ReactNode } from 'react';

/** A table that scrolls sideways within its panel when the window is narrower than its columns: the page never does. */
export function TableScroll({ children }: { children: ReactNode }) {
  return <div className="table-scroll">{children}</div>;
}
