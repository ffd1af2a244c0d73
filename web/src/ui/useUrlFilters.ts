import { useSearchParams } from 'react-router';

/** A list's filters, kept in the URL so that links, reloads and Back keep them. */
export function useUrlFilters() {
  const [params, setParams] = useSearchParams();
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };
  const clear = () => setParams({}, { replace: true });
  return { params, set, clear };
}
