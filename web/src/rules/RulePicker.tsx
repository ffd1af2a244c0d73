import { useRuleNames } from './queries';

/** A list's filter by rule, by name; the chosen rule's id is what the list's `ruleId` query takes. */
export function RulePicker({ value, onChange }: { value: string; onChange: (ruleId: string) => void }) {
  const names = useRuleNames();
  const rules = [...(names.data ?? new Map<string, string>())].sort(([, a], [, b]) => a.localeCompare(b));
  // A link may name a rule that is gone (or beyond the first 1000): it stays chosen, by its id.
  const unknown = value !== '' && !names.data?.has(value);
  return (
    <select aria-label="Rule" value={value} onChange={(event) => onChange(event.target.value)}>
      <option value="">Every rule</option>
      {unknown ? <option value={value}>{names.isPending ? 'Loading rules…' : `rule ${value} (no longer listed)`}</option> : null}
      {rules.map(([id, name]) => (
        <option key={id} value={id}>
          {name}
        </option>
      ))}
    </select>
  );
}
