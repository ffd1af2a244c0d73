import { useState } from 'react';
import { useRuleNames } from '../../rules/queries';
import { ErrorBanner, Loading } from '../../ui/states';
import type { FieldsProps } from './fields';
import { RadioChoices } from '../../ui/RadioChoices';

// With more rules than this, a filter box helps find the one to tick.
const FILTER_FROM = 8;

const FILTERS = [
  { value: 'every', title: 'Every rule', text: 'Rules created later included.' },
  { value: 'some', title: 'Only the rules I pick', text: 'Results and escalations of other rules do not reach this channel.' },
] as const;

/** Every rule, or only the rules picked: the channel hears results and escalations of those. */
export function RuleFilterPicker({ form, update, errors }: Omit<FieldsProps, 'stored'>) {
  return (
    <RadioChoices legend="Rules" choices={FILTERS} value={form.everyRule ? 'every' : 'some'} onChange={(filter) => update({ everyRule: filter === 'every' })} error={errors.ruleIds}>
      {form.everyRule ? null : <RuleChecklist picked={form.ruleIds} onChange={(ruleIds) => update({ ruleIds })} />}
    </RadioChoices>
  );
}

function RuleChecklist({ picked, onChange }: { picked: string[]; onChange: (ruleIds: string[]) => void }) {
  const names = useRuleNames();
  const [filter, setFilter] = useState('');
  if (names.isPending) return <Loading what="rules" />;
  if (names.isError) return <ErrorBanner error={names.error} what="rules" onRetry={() => void names.refetch()} />;
  const rules = [...names.data].sort((a, b) => a[1].localeCompare(b[1]));
  if (rules.length === 0) return <p className="muted">This tenant has no rules yet: let the channel hear every rule, and narrow it later.</p>;
  const shown = rules.filter(([id, name]) => picked.includes(id) || name.toLowerCase().includes(filter.trim().toLowerCase()));
  const toggle = (id: string, on: boolean) => onChange(on ? [...picked, id] : picked.filter((one) => one !== id));
  return (
    <div className="rule-checklist">
      {rules.length > FILTER_FROM ? (
        <input type="search" aria-label="Filter rules by name" placeholder="Filter rules by name" value={filter} onChange={(event) => setFilter(event.target.value)} />
      ) : null}
      <ul>
        {shown.map(([id, name]) => (
          <li key={id}>
            <label className="checkbox">
              <input type="checkbox" checked={picked.includes(id)} onChange={(event) => toggle(id, event.target.checked)} />
              {name}
            </label>
          </li>
        ))}
      </ul>
      <p className="field-hint">{picked.length === 0 ? 'No rule picked yet.' : `${picked.length} picked.`}</p>
    </div>
  );
}
