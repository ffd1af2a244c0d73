import { useState } from 'react';
import { useDebounced } from './useDebounced';
import { useUrlFilters } from './useUrlFilters';

/**
 * A list's search box kept in the URL as `name`: what is typed shows at once, and `settled`, what
 * the list asks for, follows once typing pauses.
 */
export function useUrlSearch(name: string) {
  const { params, set } = useUrlFilters();
  const [draft, setDraft] = useState(params.get(name) ?? '');
  const settled = useDebounced(draft.trim());
  const change = (value: string) => {
    setDraft(value);
    set(name, value.trim());
  };
  return { draft, settled, change, reset: () => setDraft('') };
}

/** The search box of a list; `/` focuses it. */
export function SearchBox({ label, placeholder, search }: { label: string; placeholder: string; search: ReturnType<typeof useUrlSearch> }) {
  return (
    <input
      type="search"
      className="toolbar-search"
      placeholder={`${placeholder}   /`}
      aria-label={label}
      data-shortcut="search"
      value={search.draft}
      onChange={(event) => search.change(event.target.value)}
    />
  );
}
