// Whether a ghost text can show while VS Code's suggest list is open. With the list open, VS Code
// 1.100 shows an inline suggestion only if it extends the list's selected item (the item's edit,
// its common prefix with the line removed, is a prefix of the suggestion's), and then only what
// goes beyond the item; any other is kept hidden until the list closes. No vscode import, so it
// can be unit-tested.

/** The list's selected item as `InlineCompletionContext.selectedCompletionInfo` gives it, on the cursor's line. */
export interface SelectedItem {
  /** The columns (UTF-16) the item replaces; the cursor is at `end`. */
  start: number;
  end: number;
  text: string;
}

/**
 * Whether `insertText`, inserted at the cursor (`cursor`, a UTF-16 column of `line`), extends the
 * selected item as VS Code requires to show it with the list open, and goes beyond it (a
 * suggestion equal to the item shows nothing).
 */
export function extendsSelected(line: string, cursor: number, selected: SelectedItem, insertText: string): boolean {
  if (selected.end !== cursor || selected.start > cursor) return false;
  const typed = line.slice(selected.start, cursor);
  if (!selected.text.startsWith(typed)) return false;
  const rest = selected.text.slice(typed.length);
  return insertText.length > rest.length && insertText.startsWith(rest);
}
