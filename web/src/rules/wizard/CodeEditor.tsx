import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, indentOnInput, StreamLanguage, syntaxHighlighting, type StreamParser } from '@codemirror/language';
import { powerShell } from '@codemirror/legacy-modes/mode/powershell';
import { python } from '@codemirror/legacy-modes/mode/python';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { Compartment, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';
import { useEffect, useRef } from 'react';
import type { Interpreter } from '../../api/types';

const MODES: Record<Interpreter, StreamParser<unknown>> = { sh: shell, bash: shell, python, pwsh: powerShell };

interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  interpreter: Interpreter;
  id?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * The runbook editor: CodeMirror 6 with the interpreter's highlighting (legacy stream modes).
 * Loaded on demand with the wizard. Tab indents; Escape then Tab leaves the editor.
 */
export default function CodeEditor({ value, onChange, interpreter, id, 'aria-describedby': describedBy, 'aria-invalid': invalid }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const language = useRef(new Compartment());
  const attributes = useRef(new Compartment());
  const onChangeRef = useRef(onChange);
  useEffect(() => {
    onChangeRef.current = onChange;
  }, [onChange]);

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightSpecialChars(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
          syntaxHighlighting(classHighlighter),
          language.current.of(StreamLanguage.define(MODES[interpreter])),
          attributes.current.of([]),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is made once; the effects below keep it in step with the props.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: language.current.reconfigure(StreamLanguage.define(MODES[interpreter])) });
  }, [interpreter]);

  useEffect(() => {
    const content: Record<string, string> = { 'aria-label': 'Runbook script', 'aria-multiline': 'true' };
    if (id) content.id = id;
    if (describedBy) content['aria-describedby'] = describedBy;
    if (invalid) content['aria-invalid'] = 'true';
    view.current?.dispatch({ effects: attributes.current.reconfigure(EditorView.contentAttributes.of(content)) });
  }, [id, describedBy, invalid]);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div ref={host} className={`code-editor${invalid ? ' code-editor-invalid' : ''}`} />;
}
