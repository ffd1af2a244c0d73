/** A select's options from a table of labels, `{value: label}`. */
export function LabelOptions({ labels }: { labels: Record<string, string> }) {
  return Object.entries(labels).map(([value, label]) => (
    <option key={value} value={value}>
      {label}
    </option>
  ));
}

/** A select's options for the tenant's things, each by its name; the value is its id. */
export function NamedOptions({ items }: { items: Array<{ id: string; name: string }> }) {
  return items.map((item) => (
    <option key={item.id} value={item.id}>
      {item.name}
    </option>
  ));
}
