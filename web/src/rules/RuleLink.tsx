import { Link } from 'react-router';
import { useRuleNames } from './queries';

/** A link to a rule, by its name once the names have loaded. */
export function RuleLink({ ruleId }: { ruleId: string }) {
  const names = useRuleNames();
  return <Link to={`/rules/${ruleId}`}>{names.data?.get(ruleId) ?? 'rule'}</Link>;
}
