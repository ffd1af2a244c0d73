/**
 * The words of a refusal to delete what rules still use (a credential, a runbook, a repository):
 * `rules`, them by name, the first five ('rule "a"', '7 rules: "a", "b", "c", "d", "e", …'), and
 * `them`, "it" or "them", for what the person is asked to change.
 */
export function inUseBy(rules: ReadonlyArray<{ name: string }>): { rules: string; them: 'it' | 'them' } {
  const names = rules.slice(0, 5).map((rule) => `"${rule.name}"`).join(', ');
  if (rules.length === 1) return { rules: `rule ${names}`, them: 'it' };
  return { rules: `${rules.length} rules: ${names}${rules.length > 5 ? ', …' : ''}`, them: 'them' };
}
