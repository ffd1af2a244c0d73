import { Link, useLocation } from 'react-router';
import { EmptyState } from '../ui/states';
import { PageHeader } from '../ui/PageHeader';

export function NotFoundPage() {
  const location = useLocation();
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title={`There is no page at ${location.pathname}`}>
        <p>
          Go to <Link to="/rules">rules</Link>, <Link to="/executions">executions</Link> or <Link to="/hosts">hosts</Link>.
        </p>
      </EmptyState>
    </>
  );
}
