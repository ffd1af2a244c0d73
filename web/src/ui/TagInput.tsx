import { useState, type KeyboardEvent } from 'react';

const TAG = /^[A-Za-z0-9_.:/=-]+$/;

interface TagInputProps {
  tags: string[];
  onChange: (tags: string[]) => void;
  /** Known tags offered as the person types, with how many hosts carry each. */
  suggestions?: Array<{ tag: string; hosts: number }>;
  placeholder?: string;
  id?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/** Tags as chips: type and press Enter, comma or space to add; Backspace in an empty box removes the last. */
export function TagInput({ tags, onChange, suggestions = [], placeholder = 'add a tag', ...aria }: TagInputProps) {
  const [draft, setDraft] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const add = (raw: string) => {
    const tag = raw.trim();
    if (!tag) return;
    if (!TAG.test(tag)) {
      setProblem(`"${tag}" is not a tag: use letters, digits and _ . : / = -`);
      return;
    }
    setProblem(null);
    if (!tags.includes(tag)) onChange([...tags, tag]);
    setDraft('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter' || event.key === ',' || event.key === ' ') {
      if (draft.trim()) {
        event.preventDefault();
        add(draft);
      } else if (event.key !== 'Enter') {
        event.preventDefault();
      }
    } else if (event.key === 'Backspace' && draft === '' && tags.length > 0) {
      onChange(tags.slice(0, -1));
    }
  };
  const offered = suggestions.filter((s) => !tags.includes(s.tag) && s.tag.toLowerCase().includes(draft.trim().toLowerCase())).slice(0, 12);
  return (
    <div className="tag-input">
      <div className="tag-input-box">
        {tags.map((tag) => (
          <span key={tag} className="chip">
            {tag}
            <button type="button" className="chip-remove" aria-label={`remove tag ${tag}`} onClick={() => onChange(tags.filter((t) => t !== tag))}>
              ×
            </button>
          </span>
        ))}
        <input
          {...aria}
          value={draft}
          placeholder={tags.length === 0 ? placeholder : ''}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
          onBlur={() => add(draft)}
          autoComplete="off"
        />
      </div>
      {problem ? <p className="field-error">{problem}</p> : null}
      {offered.length > 0 ? (
        <div className="tag-suggestions" aria-label="known tags">
          {offered.map((s) => (
            <button key={s.tag} type="button" className="chip chip-suggestion" onMouseDown={(event) => event.preventDefault()} onClick={() => add(s.tag)}>
              + {s.tag} <span className="muted">{s.hosts}</span>
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
