import { Link } from 'react-router';
import type { Rule } from '../api/types';
import { EscalationsTable } from '../escalations/EscalationsTable';
import { useEscalations } from '../escalations/queries';
import { PagedList } from '../ui/PagedList';

/**
 * The rule's escalations, newest first: a card only once there is one (what reaching the limit
 * does is said by the limit's card), so a quiet rule's events are not pushed down by empty cards.
 */
export function RuleEscalations({ rule }: { rule: Rule }) {
  const escalations = useEscalations({ ruleId: rule.id }, 20);
  if (escalations.isPending || (escalations.isSuccess && escalations.data.pages[0]!.items.length === 0)) return null;
  return (
    <section className="panel">
      <h2>
        Escalations <Link to={`/escalations?rule=${rule.id}&state=any`} className="h2-link">all</Link>
      </h2>
      <PagedList query={escalations} what="escalations" empty={null}>
        {(items) => <EscalationsTable escalations={items} showRule={false} />}
      </PagedList>
    </section>
  );
}
