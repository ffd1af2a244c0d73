import { apiFetch } from '../api/client';

/** Downloads an artifact: a plain link cannot carry the Authorization header, so fetch, then save. */
export async function downloadArtifact(executionId: string, artifact: { id: string; name: string }): Promise<void> {
  const response = await apiFetch(`/executions/${executionId}/artifacts/${artifact.id}`);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = artifact.name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
